"""Interop through the emulator (issue 24): two mrct-refnic instances, each in
its own network namespace, joined through a third that runs `mrct emulate`
with loss, reordering and duplication on its paths. `mrct interop` drives the
two against each other; `mrct check` judges each from its port's capture.

  clean pair:             every message completes, intact; no check fails
  A with --bug frozen-rnr: messages stay incomplete; the check fails A at
                           MR-RNR-4 (rnr_resume) and nothing of B's fails
  A with --bug pause-frames (its PAUSE frames on its veth through
                           --raw-iface): the check fails A's wire_format at
                           MR-CC-5 and nothing of B's fails

Needs root and iproute2 (exit 77: skipped)."""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from wire_lab import sh  # noqa: E402

CONFIG = """# the interop test's fabric: 8 paths, skew, loss both ways, reordering,
# duplication, CE marks both ways, and a few corrupted frames (the ICRC must catch them)
paths: 8
seed: 7
delay: 20us
path_delay: {3: 200us}
impair:
  - loss: {p: 0.01}
  - reorder: {path: 2, dir: a_to_b, p: 0.05}
  - duplicate: {dir: b_to_a, p: 0.01}
  - ecn_mark: {p: 0.02}
  - corrupt: {p: 0.002}
"""


# mrct-refnic's profiles whose frames its sockets cannot send (an IPv4 header
# with DF clear, a PAUSE frame): they go out on its veth through --raw-iface.
RAW_BUGS = {"df-clear", "pause-frames"}


class Lab:
    """ia (DUT A) -- ea [ie: the emulator] eb -- ib (DUT B), one subnet."""

    def __init__(self):
        tag = str(os.getpid() % 100000)
        self.ns = {k: f"mrct-{k}{tag}" for k in ("a", "b", "e")}
        self.dev = {"a": f"mia{tag}", "b": f"mib{tag}", "ea": f"mea{tag}", "eb": f"meb{tag}"}
        octet = 1 + os.getpid() % 250
        self.ip = {"a": f"10.214.{octet}.1", "b": f"10.214.{octet}.2"}

    def __enter__(self):
        for n in self.ns.values():
            sh("ip", "netns", "add", n)
        for side in ("a", "b"):
            dut, emu = self.dev[side], self.dev["e" + side]
            sh("ip", "link", "add", dut, "type", "veth", "peer", "name", emu)
            sh("ip", "link", "set", dut, "netns", self.ns[side])
            sh("ip", "link", "set", emu, "netns", self.ns["e"])
            sh("ip", "-n", self.ns[side], "link", "set", dut, "mtu", "9000")
            sh("ip", "-n", self.ns[side], "addr", "add", f"{self.ip[side]}/24", "dev", dut)
            sh("ip", "-n", self.ns[side], "link", "set", dut, "up")
            sh("ip", "-n", self.ns[side], "link", "set", "lo", "up")
            # A veth leaves checksums to a NIC that is not there (CHECKSUM_PARTIAL);
            # a bump in the wire passes frames on as they are, so the DUTs' kernels
            # must finish them (docs/emulator.md "Veths").
            sh("ip", "netns", "exec", self.ns[side], "ethtool", "-K", dut, "tx", "off")
            sh("ip", "-n", self.ns["e"], "link", "set", emu, "mtu", "9000")
            sh("ip", "-n", self.ns["e"], "link", "set", emu, "up")
        return self

    def __exit__(self, *exc):
        for n in self.ns.values():
            sh("ip", "netns", "del", n, check=False)


def start(cmd, log):
    return subprocess.Popen(cmd, stdout=open(log, "w"), stderr=subprocess.STDOUT)


def wait_listen(lab, side):
    deadline = time.time() + 5
    while time.time() < deadline:
        if ":7700" in sh("ip", "netns", "exec", lab.ns[side], "ss", "-ltn", check=False).stdout:
            return
        time.sleep(0.05)
    raise RuntimeError(f"mrct-refnic {side} did not listen within 5 s")


def one_run(args, lab, work, bug):
    out = os.path.join(work, "emulate")
    cfg = os.path.join(work, "fabric.yaml")
    open(cfg, "w").write(CONFIG)
    procs = []
    try:
        for side in ("a", "b"):
            cmd = ["ip", "netns", "exec", lab.ns[side], args.refnic, "--addr", lab.ip[side], "--listen",
                   f"{lab.ip[side]}:7700"]
            if side == "a" and bug:
                cmd += ["--bug", bug]
                if bug in RAW_BUGS:  # frames its UDP sockets cannot send
                    cmd += ["--raw-iface", lab.dev["a"]]
            procs.append(start(cmd, os.path.join(work, f"refnic-{side}.log")))
            wait_listen(lab, side)
        emu = start(["ip", "netns", "exec", lab.ns["e"], args.mrct, "emulate", "--port-a", lab.dev["ea"], "--port-b",
                     lab.dev["eb"], "--config", cfg, "--out", out, "--progress", "0"], os.path.join(work, "emulate.log"))
        time.sleep(0.5)
        # The agents' TCP goes through the emulator too (as "other" frames).
        io = subprocess.run(["ip", "netns", "exec", lab.ns["a"], args.mrct, "interop", "--a", f"{lab.ip['a']}:7700",
                             "--b", f"{lab.ip['b']}:7700", "--timeout", "5s", "--out",
                             os.path.join(work, "interop.json")], capture_output=True, text=True)
        time.sleep(0.3)
        emu.send_signal(signal.SIGINT)
        emu.wait(timeout=30)
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=5)
    summary = json.load(open(os.path.join(out, "emulate.json")))
    chk = subprocess.run([args.mrct, "check", out, "--out", os.path.join(work, "check")], capture_output=True, text=True)
    results = json.load(open(os.path.join(work, "check", "results.json")))
    return io, summary, chk, results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mrct", required=True)
    ap.add_argument("--refnic", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("ethtool"):
        print("SKIP: needs root, iproute2 and ethtool (network namespaces)")
        return 77
    root = os.path.join(args.workdir, "interop")
    shutil.rmtree(root, ignore_errors=True)
    failures = []
    with Lab() as lab:
        for bug in (None, "frozen-rnr", "pause-frames"):
            work = os.path.join(root, bug or "clean")
            os.makedirs(work)
            io, summary, chk, results = one_run(args, lab, work, bug)
            lost = {s: summary["ports"][s].get("lost_in", 0) for s in ("a", "b")}
            if any(lost.values()):
                # The capture buffer dropped frames (a host too busy to read
                # them): no verdict on that port stands (D120). Once more.
                print(f"[{bug or 'clean'}] the emulator's captures lost {lost} frames; running again")
                shutil.rmtree(work)
                os.makedirs(work)
                io, summary, chk, results = one_run(args, lab, work, bug)
                lost = {s: summary["ports"][s].get("lost_in", 0) for s in ("a", "b")}
                if any(lost.values()):
                    failures.append(f"{bug}: the emulator's captures lost {lost} frames twice: the verdicts below are "
                                    "inconclusive by D120, this host too busy for the test")
            cases = results["cases"]
            failed = [c for c in cases if c["verdict"] in ("fail", "error")]
            d = summary["directions"]
            seen = {s: summary["ports"][s]["addresses"] for s in ("a", "b")}
            print(f"[{bug or 'clean'}] interop exit {io.returncode}; emulator: A->B dropped {d['a_to_b']['dropped']}, "
                  f"B->A dropped {d['b_to_a']['dropped']} duplicated {d['b_to_a']['duplicated']}; ports saw {seen}; "
                  f"check exit {chk.returncode}: " + ", ".join(f"{c['id']} {c['verdict']}" for c in cases if c['verdict'] != 'pass'))
            if seen != {"a": [lab.ip["a"]], "b": [lab.ip["b"]]}:
                failures.append(f"{bug}: the emulator saw {seen} on its ports")
            if not d["a_to_b"]["dropped"] or not d["b_to_a"]["duplicated"]:
                failures.append(f"{bug}: the fabric's stages did nothing (no loss or duplication)")
            if len({c["id"].split("/")[0] for c in cases}) != 2:
                failures.append(f"{bug}: the check did not judge both DUTs")
            if bug is None:
                if io.returncode != 0:
                    failures.append("clean: interop exit %d: %s" % (io.returncode, io.stderr.strip()[-400:]))
                if chk.returncode != 0 or failed:
                    failures.append("clean: the check failed a conforming pair: " +
                                    "; ".join(f"{c['id']}: {c['reason']}" for c in failed))
                passed = {c["id"].split("/")[1] for c in cases if c["verdict"] == "pass"}
                # window_limit is not among them: the interop workload's
                # messages never put an initial window out before a first
                # ACK, so it is inconclusive there (D100); it must not fail.
                for must in ("wire_format", "acks_conform", "resend_identity"):
                    if must not in passed:
                        failures.append(f"clean: {must} did not pass for both DUTs")
            elif bug == "pause-frames":
                caught = [c for c in failed if c["id"] == f"{lab.ip['a']}/wire_format" and "MR-CC-5" in c["clauses"]
                          and "PAUSE" in c["reason"]]
                if chk.returncode != 1 or not caught:
                    failures.append("pause-frames: the check did not fail A's wire_format for its PAUSE frames (MR-CC-5)")
                wrong = [c["id"] for c in failed if not c["id"].startswith(lab.ip["a"] + "/")]
                if wrong:
                    failures.append(f"pause-frames: the conforming side B failed {wrong}")
            else:
                if io.returncode != 1:
                    failures.append(f"frozen-rnr: interop exit {io.returncode}, expected 1 (messages incomplete)")
                caught = [c for c in failed if c["id"] == f"{lab.ip['a']}/rnr_resume" and "MR-RNR-4" in c["clauses"]]
                if chk.returncode != 1 or not caught:
                    failures.append("frozen-rnr: the check did not fail A's rnr_resume citing MR-RNR-4")
                wrong = [c["id"] for c in failed if not c["id"].startswith(lab.ip["a"] + "/")]
                if wrong:
                    failures.append(f"frozen-rnr: the conforming side B failed {wrong}")
            if bug is None:
                # --dut narrows to one DUT, judged from its own port only.
                one = subprocess.run([args.mrct, "check", os.path.join(work, "emulate"), "--dut", lab.ip["b"],
                                      "--out", os.path.join(work, "check-b")], capture_output=True, text=True)
                ids = {c["id"].split("/")[0] for c in json.load(open(os.path.join(work, "check-b", "results.json")))["cases"]}
                if one.returncode != 0 or ids != {lab.ip["b"]}:
                    failures.append(f"check --dut {lab.ip['b']}: exit {one.returncode}, judged {ids}")
                none = subprocess.run([args.mrct, "check", os.path.join(work, "emulate"), "--dut", "10.9.9.9"],
                                      capture_output=True, text=True)
                if none.returncode != 2 or "none of the --dut addresses" not in none.stderr:
                    failures.append(f"check --dut of an address never seen: exit {none.returncode}: {none.stderr.strip()}")
    # Bad input: a configuration error names file:line:col (exit 2); an agent
    # nobody serves is an infrastructure error (exit 3).
    bad = os.path.join(root, "bad.yaml")
    open(bad, "w").write("paths: 4\nimpair:\n  - loss: {p: 2}\n")
    r = subprocess.run([args.mrct, "emulate", "--port-a", "lo", "--port-b", "lo", "--config", bad], capture_output=True, text=True)
    if r.returncode != 2 or f"{bad}:3:5:" not in r.stderr:
        failures.append(f"emulate with a bad configuration: exit {r.returncode}: {r.stderr.strip()}")
    r = subprocess.run([args.mrct, "interop", "--a", "127.0.0.1:9", "--b", "127.0.0.1:9", "--timeout", "1s"],
                       capture_output=True, text=True)
    if r.returncode != 3 or "DUT A" not in r.stderr:
        failures.append(f"interop without agents: exit {r.returncode}: {r.stderr.strip()}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
