#!/usr/bin/python3
"""Soak (issue 22 item 9): a long run in one process must not grow.

  sudo /usr/bin/python3 bench/soak.py [--build DIR] [--sim-repeat 5,50] [--wire-repeat 2,20] [--filter GLOB ...]

1. virtual time: the whole 1.2 plan against `sim` with --repeat 5 and then
   --repeat 50 (--jobs 1 unless --jobs): the peak RSS of each (the kernel's
   ru_maxrss of the mrct child); the target is the long run within 10 % of
   the short one. One job, because with two the peak is the two largest
   cases of the plan happening to run side by side, which a longer run has
   more chances to meet: RSS sampled through a --jobs 2 run swings between
   140 and 270 MB with no trend (docs/performance.md, "Soak").
2. real time (root: two network namespaces, tests/tools/wire_lab.py): the
   engine over agent+udp against one mrct-refnic that stays up, a slice of
   the plan (--filter, default CONN-*, OOO-*, RNR-00*) --repeat 2 and then
   --repeat 20: the engine's peak RSS for each, and mrct-refnic's RSS, open
   file descriptors, threads and sockets after each run (a leak grows with
   the runs; its send sockets are bounded by 512).
Prints one line per figure and "soak: ok" or what grew; exit 0 or 1."""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "tools"))
from wire_lab import Netns, Refnic, as_root, dut_spec  # noqa: E402

TX_SOCKETS = 512  # netio::udp_options::max_tx_sockets
PLAN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testplans", "metaroce-1.2", "plan.yaml")


def peak_rss_mb(cmd):
    """Runs cmd to the end; (exit code, the child's peak RSS in MB)."""
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execvp(cmd[0], cmd)
    _, status, ru = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), ru.ru_maxrss / 1024.0


def proc_figures(pid):
    """mrct-refnic's RSS (MB), open descriptors, threads and sockets now."""
    status = open(f"/proc/{pid}/status").read()
    rss = int(status.split("VmRSS:")[1].split()[0]) / 1024.0
    threads = int(status.split("Threads:")[1].split()[0])
    fds = os.listdir(f"/proc/{pid}/fd")
    socks = sum(1 for f in fds if os.readlink(f"/proc/{pid}/fd/{f}").startswith("socket:"))
    return rss, len(fds), threads, socks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    ap.add_argument("--sim-repeat", default="5,50")
    ap.add_argument("--wire-repeat", default="2,20")
    ap.add_argument("--jobs", default="1", help="--jobs of the sim runs (default 1: see above)")
    ap.add_argument("--filter", action="append")
    args = ap.parse_args()
    mrct = os.path.abspath(os.path.join(args.build, "mrct"))
    work = tempfile.mkdtemp(prefix="mrct-soak-")
    grew = []

    short, long_ = (int(x) for x in args.sim_repeat.split(","))
    sim = {}
    for n in (short, long_):
        rc, mb = peak_rss_mb([mrct, "-q", "run", PLAN, "--repeat", str(n), "--jobs", args.jobs, "--failures-only",
                              "--out", os.path.join(work, f"sim{n}")])
        sim[n] = mb
        print(f"sim      --repeat {n:3d}: exit {rc}, peak RSS {mb:7.1f} MB", flush=True)
        if rc != 0:
            grew.append(f"sim --repeat {n} exited {rc}")
    if sim[long_] > 1.10 * sim[short]:
        grew.append(f"sim: peak RSS {sim[long_]:.1f} MB at --repeat {long_} vs {sim[short]:.1f} MB at {short} (> 10 %)")

    if not as_root():
        print("wire part skipped (needs root)")
    else:
        filters = args.filter or ["CONN-*", "OOO-*", "RNR-00*"]
        short, long_ = (int(x) for x in args.wire_repeat.split(","))
        lab = argparse.Namespace(refnic=os.path.abspath(os.path.join(args.build, "mrct-refnic")))
        with Netns() as ns:
            nic = Refnic(lab, ns, log=os.path.join(work, "refnic.log"))
            try:
                before = proc_figures(nic.p.pid)
                print(f"refnic   at start: RSS {before[0]:.1f} MB, {before[1]} fds, {before[2]} threads, {before[3]} sockets")
                eng = {}
                after = {}
                for n in (short, long_):
                    cmd = ["ip", "netns", "exec", ns.e, mrct, "-q", "run", PLAN, "--dut", dut_spec("udp", ns, timeout="5s"),
                           "--repeat", str(n), "--failures-only", "--out", os.path.join(work, f"wire{n}")]
                    for f in filters:
                        cmd += ["--filter", f]
                    rc, mb = peak_rss_mb(cmd)
                    eng[n] = mb
                    after[n] = proc_figures(nic.p.pid)
                    a = after[n]
                    print(f"wire     --repeat {n:3d}: exit {rc}, engine peak RSS {mb:7.1f} MB; refnic after: RSS {a[0]:.1f} MB, "
                          f"{a[1]} fds, {a[2]} threads, {a[3]} sockets", flush=True)
                if eng[long_] > 1.10 * eng[short]:
                    grew.append(f"engine on the wire: peak RSS {eng[long_]:.1f} MB vs {eng[short]:.1f} MB (> 10 %)")
                s, l_ = after[short], after[long_]
                # Sockets: one per source port in use, at most 512 kept open
                # (netio udp_options::max_tx_sockets, the least recently used
                # closed beyond): bounded, not constant.
                if l_[2] > s[2] or l_[3] > TX_SOCKETS + 8:
                    grew.append(f"mrct-refnic: fds/threads/sockets {s[1:]} after {short} repeats, {l_[1:]} after {long_} "
                                f"(bound: {TX_SOCKETS} send sockets)")
                if l_[0] > 1.10 * s[0] + 16:
                    grew.append(f"mrct-refnic: RSS {s[0]:.1f} MB after {short} repeats, {l_[0]:.1f} MB after {long_}")
            finally:
                nic.stop()
    for g in grew:
        print("GREW:", g)
    print("soak: ok" if not grew else f"soak: {len(grew)} problem(s)")
    print(f"(work folder {work})")
    return 1 if grew else 0


if __name__ == "__main__":
    sys.exit(main())
