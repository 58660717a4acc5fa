#!/usr/bin/python3
"""Cases of the plan, run N times on a real wire (on demand, not in CI).

The engine over agent+udp against mrct-refnic (the reference, or a bug
profile with --bug), in two network namespaces joined by a veth
(tests/tools/wire_lab.py), a fresh mrct-refnic per run, its process named
(pid=). Prints each run's verdict and reason, then the counts: how often a
case passes the reference, and how often a profile is caught, on this host.
Beside load, start it yourself (`stress-ng --cpu 2 --timeout 120s &`).
A DUT too slow for its wire: `--dut-cpu 5` holds mrct-refnic to 5 % of a
CPU (a CFS quota: it runs 5 ms of every 100 ms, held 95 ms at a time), the
engine untouched (D111). A host too slow for the engine: `--engine-cpu 20`
holds the engine's process (`mrct run`, its sampler threads with it) to 20 %
of a CPU the same way, the DUT untouched. `--perf`: the scheduler's switches and wakeups
of mrct-refnic, system-wide, recorded around each run (perf), kept as
WORKDIR/i.perf for a run with a fail or an error (bench/sched_waits.py
reads them with mrct-refnic's log).

    sudo /usr/bin/python3 bench/case_on_wire.py --case RNR-015 [--bug rnr-ignores-pause] [--n 10]
"""
import argparse
import collections
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "tools"))
from wire_lab import Bump, CpuQuota, Netns, Refnic, agent_args, as_root, dut_spec, run_mrct, sh, with_pid  # noqa: E402


def start_perf(path):
    """perf record, system-wide, of the switches and wakeups that involve
    mrct-refnic (whoever preempted it, whoever woke it), on CLOCK_MONOTONIC."""
    rec = subprocess.Popen(["perf", "record", "-q", "-a", "-k", "mono", "-o", path,
                            "-e", "sched:sched_switch", "--filter", 'prev_comm == "mrct-refnic" || next_comm == "mrct-refnic"',
                            "-e", "sched:sched_wakeup", "--filter", 'comm == "mrct-refnic"'],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # perf's stamps are CLOCK_MONOTONIC, mrct-refnic's log wall time: the
    # offset between the two, for bench/sched_waits.py.
    with open(path + ".clock", "w") as f:
        f.write(f"{time.clock_gettime(time.CLOCK_REALTIME) - time.clock_gettime(time.CLOCK_MONOTONIC):.9f}\n")
    for _ in range(50):  # until it writes its header: recording
        if os.path.exists(path) and os.path.getsize(path) > 0:
            break
        subprocess.run(["sleep", "0.1"])
    return rec


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", required=True, help="a case ID or glob (mrct run --filter)")
    ap.add_argument("--pcap", choices=["fail", "all", "none"], default="fail",
                    help="which cases keep their capture in WORKDIR/i/pcap (mrct run --capture; default fail)")
    ap.add_argument("--bug", default=None, help="a bug profile of mrct-refnic (default: the reference)")
    agent_args(ap)
    ap.add_argument("--variant", default=None,
                    help="conforming variant(s) of mrct-refnic, NAME[+NAME...] (mrct docs variants); a conforming DUT: "
                         "expect the reference's verdicts (the counts printed show them)")
    ap.add_argument("--n", type=int, default=10, help="runs (default 10)")
    ap.add_argument("--build", default=os.path.join(root, "build"))
    ap.add_argument("--plan", default=os.path.join(root, "testplans", "metaroce-1.2", "plan.yaml"))
    ap.add_argument("--workdir", default="/tmp/mrct-case-on-wire")
    ap.add_argument("--dut-cpu", type=float, default=None,
                    help="hold mrct-refnic to this percentage of one CPU (a cgroup CPU quota per 100 ms)")
    ap.add_argument("--engine-cpu", type=float, default=None,
                    help="hold the engine (mrct run) to this percentage of one CPU (a cgroup CPU quota per 100 ms)")
    ap.add_argument("--tx", choices=["udp", "packet"], default="udp",
                    help="packet: both ends transmit through packet sockets (agent+udp tx=packet, mrct-refnic "
                         "--packet-tx; D134); default udp (the send sockets)")
    ap.add_argument("--wire-loss", type=float, default=None, metavar="PERCENT",
                    help="a lossy lab link the engine cannot see: each namespace drops this percentage of the "
                         "MetaRoCE frames (UDP port 4791) it receives, at random, before any socket "
                         "(nftables, prerouting; no interface counter moves). Needs nft (Debian: nftables)")
    ap.add_argument("--bump", default=None, metavar="FABRIC.yaml",
                    help="put `mrct emulate` with this fabric (docs/emulator.md) between the engine's and the "
                         "DUT's veths, in a namespace of its own: a lab fabric the engine does not control "
                         "(delay, loss, reordering it cannot see); its emulate.json is kept in WORKDIR/bump")
    ap.add_argument("--wire-rtt", default=None, metavar="DUR",
                    help="the DUT spec's wire_rtt= (D146): the round trip declared for a fabric between the engine "
                         "and the DUT (with --bump: about twice its delay, plus the emulator's own)")
    ap.add_argument("--perf", action="store_true",
                    help="record mrct-refnic's scheduler switches and wakeups (perf) around each run; "
                         "kept for runs with a fail or an error")
    a = ap.parse_args()
    if not as_root():
        return 77
    if a.perf and not shutil.which("perf"):
        print("--perf: perf is not installed (apt-get install linux-perf)", file=sys.stderr)
        return 2
    if a.wire_loss and not shutil.which("nft"):
        print("--wire-loss: nft is not installed (apt-get install nftables)", file=sys.stderr)
        return 2
    if a.bump and not shutil.which("ethtool"):
        print("--bump: ethtool is not installed (apt-get install ethtool)", file=sys.stderr)
        return 2
    a.mrct = os.path.join(a.build, "mrct")
    a.refnic = os.path.join(a.build, "mrct-refnic")
    os.makedirs(a.workdir, exist_ok=True)
    counts = collections.Counter()
    with Netns(bump=bool(a.bump)) as ns, \
            Bump(ns, a.mrct, a.bump, os.path.join(a.workdir, "bump.log"), os.path.join(a.workdir, "bump")) as bump:
        if a.wire_loss:
            per_million = round(a.wire_loss * 10000)
            for n in (ns.e, ns.d):
                sh("ip", "netns", "exec", n, "nft", "add table inet mrct_loss")
                sh("ip", "netns", "exec", n, "nft",
                   "add chain inet mrct_loss pre { type filter hook prerouting priority -300; }")
                sh("ip", "netns", "exec", n, "nft",
                   f"add rule inet mrct_loss pre udp dport 4791 numgen random mod 1000000 < {per_million} counter drop")
        for i in range(a.n):
            nic = Refnic(a, ns, a.bug, log=os.path.join(a.workdir, f"{i}.refnic.log"), packet_tx=a.tx == "packet",
                         variant=a.variant, reap_stamps=a.reap_stamps, agent_as=a.agent_as)
            quota = CpuQuota(nic.p.pid, a.dut_cpu) if a.dut_cpu else None
            perf_file = os.path.join(a.workdir, f"{i}.perf")
            rec = start_perf(perf_file) if a.perf else None
            try:
                spec = dut_spec("udp", ns, tx_packet=a.tx == "packet", direct=not a.bump)
                if a.wire_rtt:
                    spec += f",wire_rtt={a.wire_rtt}"
                rc, res, out = run_mrct(a, os.path.join(a.workdir, str(i)), with_pid(spec, nic.p.pid), ns,
                                        ["--filter", a.case, "--capture", a.pcap], engine_cpu=a.engine_cpu)
            finally:
                nic.stop()
                if quota:
                    quota.remove()
                if rec:
                    rec.send_signal(signal.SIGINT)
                    rec.wait()
            if rec and res is not None and not any(c["verdict"] in ("fail", "error") for c in res["cases"]):
                for f in (perf_file, perf_file + ".clock"):
                    os.remove(f)
            if res is None:
                print(f"{i}: no results (exit {rc}): {out[-300:]}")
                counts["no results"] += 1
                continue
            for c in res["cases"]:
                counts[c["verdict"]] += 1
                print(f"{i}: {c['id']} {c['verdict']} {c.get('reason', '')[:200]}")
        if a.wire_loss:
            for n, who in ((ns.e, "engine"), (ns.d, "DUT")):
                rules = sh("ip", "netns", "exec", n, "nft", "list table inet mrct_loss").stdout
                dropped = rules.split("counter packets ")[1].split()[0] if "counter packets " in rules else "?"
                print(f"the wire dropped {dropped} frames on their way to the {who}")
        if a.bump:
            bump.stop()
            print(open(bump.log).read().strip())
    who = a.bug or "reference"
    if a.variant:
        who += f" (variant {a.variant})"
    if a.reap_stamps:
        who += " (reap stamps)"
    if a.agent_as:
        who += " (agent as " + ", ".join(a.agent_as) + ")"
    print(f"{who}, {a.case} x {a.n}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
