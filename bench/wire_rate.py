#!/usr/bin/python3
"""The real-time data path's rate (issue 24): the engine over agent+udp and
mrct-refnic as the DUT, in two network namespaces joined by a jumbo veth
(tests/tools/wire_lab.py), one 64 MiB WRITE each way (bench/plans/wire_rate.yaml).
Per direction, median of N runs: the data phase (first to last data frame in
the case's pcap) as goodput and data frames/s, the data frames sent beyond
the message's own (resends), and the whole case (posting 64 MiB through the
agent included); the CPU each process spent. Side by side on the same
veth, after each run (interleaved: this VM's speed drifts between
invocations), tcpreplay (Debian's tcpreplay) sending the data frames of the
engine's own capture as fast as it can: the frames/s a plain replay tool
reaches there, the bar issue 24 sets for mrct; each run's frames/s over the
replay's right after it, and the median of those ratios. With --perf DIR, records perf
profiles of both processes, stamped with the wall clock like the pcaps, and
prints each case's data phase as a `perf report --time` range.

With --wire dpdk both ends speak through DPDK's net_af_packet on their veth
ends (the engine over agent+dpdk, mrct-refnic --dpdk), polled every 10 us or,
with --busy, without pause; the side-by-side step is then dpdk-testpmd io
forwarding on the same two veth ends (two testpmd processes, one burst
train started with tx_first), 4186-byte frames: what DPDK's own forwarder
moves over the same ports and kernel path.

    sudo /usr/bin/python3 bench/wire_rate.py --build build [--runs 3] [--perf /tmp/prof]
    sudo /usr/bin/python3 bench/wire_rate.py --build build --wire dpdk --busy [--runs 3]
"""
import argparse
import json
import re
import shutil
import os
import statistics
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "tools"))
from wire_lab import Netns, Refnic, dpdk_eal, dut_spec  # noqa: E402

SIZE = 64 << 20
PACKETS = SIZE // 4096


def data_phase(pcap):
    """(seconds from the first to the last data frame, data frames, first,
    last) of a classic pcap: data frames are the 4 KiB-payload ones (4186
    bytes); first and last are their wall-clock stamps."""
    first = last = None
    n = 0
    with open(pcap, "rb") as f:
        head = f.read(24)
        nano = head[:4] in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                break
            sec, frac, incl, _ = struct.unpack("<IIII", rec)
            f.seek(incl, 1)
            if incl < 4000:
                continue
            t = sec + frac / (1e9 if nano else 1e6)
            first = t if first is None else first
            last = t
            n += 1
    return (last - first if n > 1 else float("nan")), n, first, last


def udp_drops(netns):
    """The kernel's UDP drop counters in a network namespace (/proc/net/snmp):
    {'RcvbufErrors': n, 'SndbufErrors': n}: frames a socket's receive buffer
    had no room for, and sends refused for a full send buffer."""
    r = subprocess.run(["ip", "netns", "exec", netns, "cat", "/proc/net/snmp"], capture_output=True, text=True)
    lines = [l.split() for l in r.stdout.splitlines() if l.startswith("Udp:")]
    if len(lines) < 2:
        return {}
    row = dict(zip(lines[0][1:], (int(x) for x in lines[1][1:])))
    return {k: row.get(k, 0) for k in ("RcvbufErrors", "SndbufErrors")}


def data_frames_pcap(src, dst):
    """Copies the data frames (4 KiB payloads) of pcap `src` into `dst`; returns how many."""
    n = 0
    with open(src, "rb") as f, open(dst, "wb") as out:
        out.write(f.read(24))
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                break
            incl = struct.unpack("<IIII", rec)[2]
            body = f.read(incl)
            if incl >= 4000:
                out.write(rec + body)
                n += 1
    return n


def replay_rate(ns, pcap, loops):
    """tcpreplay --topspeed of `pcap` on the engine's veth: frames/s and Gb/s it reports."""
    if not shutil.which("tcpreplay"):
        return None
    r = subprocess.run(["ip", "netns", "exec", ns.e, "tcpreplay", "--topspeed", f"--loop={loops}", "-i", ns.ve, pcap],
                       capture_output=True, text=True)
    m = re.search(r"Rated:\s+[\d.]+ Bps,\s+([\d.]+) Mbps,\s+([\d.]+) pps", r.stdout)
    return (float(m.group(2)), float(m.group(1)) / 1e3) if m else None


def testpmd_rate(ns, seconds=5):
    """dpdk-testpmd io forwarding between the two veth ends (net_af_packet,
    as mrct's DPDK runs use them): 16 bursts of 32 4186-byte frames started
    from the engine's side and forwarded back and forth; the frames/s the
    engine side receives over `seconds`, or None without dpdk-testpmd."""
    if not shutil.which("dpdk-testpmd"):
        return None

    def start(netns, iface, lcores, prefix):
        eal = dpdk_eal(iface, prefix=prefix).replace(" -l 0 ", f" -l {lcores} ")
        return subprocess.Popen(["ip", "netns", "exec", netns, "dpdk-testpmd", *eal.split(), "--", "-i", "--no-mlockall",
                                 "--total-num-mbufs=8192", "--mbuf-size=16512", "--forward-mode=io", "--txpkts=4186"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    # The first lcore is testpmd's main one (it waits on its prompt); the
    # second forwards: each forwarder has a core.
    a = start(ns.e, ns.ve, "0,1", f"tpa{os.getpid()}")
    b = start(ns.d, ns.vd, "1,0", f"tpb{os.getpid()}")
    time.sleep(3)

    def say(p, text):
        p.stdin.write(text)
        p.stdin.flush()

    say(b, "start\n")
    say(a, "start tx_first 16\n")
    time.sleep(2)
    say(a, "show port stats all\n")  # starts the measured interval
    time.sleep(seconds)
    say(a, "show port stats all\nstop\nquit\n")
    say(b, "stop\nquit\n")
    out = a.communicate(timeout=30)[0]
    b.communicate(timeout=30)
    pps = re.findall(r"Rx-pps:\s+(\d+)", out)
    return float(pps[-1]) if pps else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--perf", help="record perf profiles of both processes into this folder")
    ap.add_argument("--case", action="append", default=[], metavar="GLOB",
                    help="only the cases matching GLOB (mrct run --filter; repeatable), e.g. RATE-ENGINE-SENDS")
    ap.add_argument("--perf-event", default="cycles",
                    help="with --perf: the event sampled, one sample per 10 (e.g. page-faults: where the faults are taken); default cycles at 2 kHz")
    ap.add_argument("--workdir", default="/tmp/mrct-wire-rate")
    ap.add_argument("--wire", choices=["udp", "pcap", "dpdk"], default="udp",
                    help="udp: agent+udp and mrct-refnic on UDP sockets; pcap: the engine over agent+pcap "
                         "(libpcap on its veth end), mrct-refnic on UDP sockets; dpdk: both through net_af_packet")
    ap.add_argument("--busy", action="store_true",
                    help="--wire dpdk: both ends poll without pause; --wire udp: mrct-refnic spins on its sockets "
                         "(--busy-poll) instead of sleeping")
    ap.add_argument("--tx", choices=["udp", "packet"], default="udp",
                    help="--wire udp: packet = both ends transmit through an AF_PACKET socket on their veth end "
                         "(agent+udp tx=packet, mrct-refnic --packet-tx), receiving on UDP sockets as before")
    ap.add_argument("--pin", action="store_true",
                    help="the engine on CPU 0 and mrct-refnic (all its threads) on CPU 1 (taskset), instead of where the "
                         "kernel's scheduler puts them; tcpreplay is not pinned")
    ap.add_argument("--rps", metavar="MASK",
                    help="set receive packet steering on both veth ends to this CPU mask (hex, e.g. 3): the veth's "
                         "receive work then runs on a CPU the flow hash picks, not on the sending CPU; split (with "
                         "--pin): the engine's end on CPU 0, mrct-refnic's on CPU 1, each where its receiver runs")
    args = ap.parse_args()
    mrct = os.path.abspath(os.path.join(args.build, "mrct"))
    refnic = os.path.abspath(os.path.join(args.build, "mrct-refnic"))
    plan = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plans", "wire_rate.yaml")
    os.makedirs(args.workdir, exist_ok=True)
    rows = {}
    replay, frames = [], None  # (run, (frames/s, Gb/s)) after each run; the replayed pcap
    # Samples stamped with the wall clock, as the pcaps are: the data phase's
    # profile alone is `perf report --time FIRST,LAST` (printed per case).
    perf_event = ["-k", "realtime"] + (["-F", "2000"] if args.perf_event == "cycles" else ["-e", args.perf_event, "-c", "10"])
    with Netns() as ns:
        if args.rps:
            # "split" (with --pin): each end's receive work on its receiver's CPU.
            masks = ("1", "2") if args.rps == "split" else (args.rps, args.rps)
            for n, dev, mask in ((ns.e, ns.ve, masks[0]), (ns.d, ns.vd, masks[1])):
                subprocess.run(["ip", "netns", "exec", n, "sh", "-c", f"echo {mask} > /sys/class/net/{dev}/queues/rx-0/rps_cpus"],
                               check=True)
        lab = argparse.Namespace(refnic=refnic)
        for i in range(args.runs):
            packet = args.wire == "udp" and args.tx == "packet"
            nic = Refnic(lab, ns, log=os.path.join(args.workdir, "refnic.log"), dpdk=args.wire == "dpdk", busy=args.busy,
                         packet_tx=packet)
            perf = []
            if args.perf:
                os.makedirs(args.perf, exist_ok=True)
                perf.append(subprocess.Popen(["perf", "record", "--call-graph", "dwarf,16384", *perf_event, "-o", os.path.join(args.perf, f"refnic.{i}.data"),
                                              "-p", str(nic.p.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            out = os.path.join(args.workdir, f"run{i}")
            if args.pin:
                subprocess.run(["taskset", "-a", "-p", "-c", "1", str(nic.p.pid)], check=True, stdout=subprocess.DEVNULL)
            cmd = ["ip", "netns", "exec", ns.e] + (["taskset", "-c", "0"] if args.pin else [])
            if args.perf:
                cmd += ["perf", "record", "--call-graph", "dwarf,16384", *perf_event, "-o", os.path.join(args.perf, f"engine.{i}.data")]
            spec = dut_spec(args.wire, ns, timeout="5s", busy=args.busy, tx_packet=packet)
            cmd += [mrct, "-q", "run", plan, "--dut", spec, "--capture", "all", "--out", out]
            for c in args.case:
                cmd += ["--filter", c]
            drops0 = {n: udp_drops(n) for n in (ns.e, ns.d)}
            t0 = time.time()
            before = os.times()
            r = subprocess.run(cmd, capture_output=True, text=True)
            after = os.times()
            wall = time.time() - t0
            for p in perf:
                p.send_signal(2)
                p.wait()
            nic_cpu = None
            try:
                st = open(f"/proc/{nic.p.pid}/stat").read().split(")")[1].split()
                nic_cpu = (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")
            except OSError:
                pass
            nic.stop()
            res_path = os.path.join(out, "results.json")
            if not os.path.exists(res_path):
                print(r.stdout + r.stderr)
                return 1
            res = json.load(open(res_path))
            for c in res["cases"]:
                secs, n, first, last = data_phase(os.path.join(out, "pcap", c["id"] + ".pcap"))
                zero = c.get("timing", {}).get("wall_zero_unix_ns")
                if args.perf and first is not None and zero is not None:
                    # The pcap counts from the case's time 0; results.json
                    # has its calendar time.
                    first, last = (int(zero) / 1e9 + x for x in (first, last))
                    print(f"{c['id']}: data phase alone: perf report -i {os.path.join(args.perf, f'engine.{i}.data')} "
                          f"(or refnic.{i}.data) --time {first:.6f},{last:.6f}", flush=True)
                rows.setdefault(c["id"], []).append((c["verdict"], SIZE * 8 / secs / 1e9, n / secs, n - PACKETS,
                                                     c["sim_time_us"] / 1e6))
            # Side by side, interleaved: tcpreplay on the same veth right
            # after each run (this VM's speed drifts by a quarter between
            # invocations), replaying the data frames of the first run's
            # capture of RATE-ENGINE-SENDS.
            if args.wire in ("udp", "pcap"):
                src = os.path.join(out, "pcap", "RATE-ENGINE-SENDS.pcap")
                if frames is None and os.path.exists(src):
                    frames = os.path.join(args.workdir, "replay.pcap")
                    if not data_frames_pcap(src, frames):
                        frames = False
                if frames:
                    x = replay_rate(ns, frames, 3)
                    if x:
                        replay.append((i, x))
            drops = []
            for who, n in (("engine", ns.e), ("refnic", ns.d)):
                d1 = udp_drops(n)
                drops.append(f"{who} " + "/".join(str(d1.get(k, 0) - drops0[n].get(k, 0)) for k in ("RcvbufErrors", "SndbufErrors")))
            print(f"run {i + 1}: engine cpu {after.children_user - before.children_user + after.children_system - before.children_system:.2f} s, "
                  f"refnic cpu {nic_cpu if nic_cpu is not None else float('nan'):.2f} s, wall {wall:.1f} s; "
                  f"UDP receive-buffer/send-buffer drops: {', '.join(drops)}" +
                  (" (over DPDK: the kernel's own copy of each frame, dropped at the never-read ICMP sink "
                   "on UDP 4791; docs/adapters.md)" if args.wire == "dpdk" else ""), flush=True)
        # Side by side: the same data frames replayed by tcpreplay on the same
        # veth, or (dpdk) testpmd forwarding over the same DPDK ports.
        fwd = [testpmd_rate(ns) for _ in range(args.runs)] if args.wire == "dpdk" else []
        fwd = [x for x in fwd if x]
    for cid, v in rows.items():
        gb = statistics.median(x[1] for x in v)
        fps = statistics.median(x[2] for x in v)
        resent = statistics.median(x[3] for x in v)
        case_s = statistics.median(x[4] for x in v)
        print(f"{cid:18s} {','.join(x[0] for x in v):20s} data phase: goodput {gb:6.2f} Gb/s, {fps / 1e3:6.1f} k data frames/s, "
              f"{resent:.0f} resends; whole case {case_s:.2f} s")
    if args.wire == "dpdk":
        if fwd:
            print(f"{'dpdk-testpmd io':18s} {'(same ports)':20s} forwarding 4186-byte frames back and forth: "
                  f"{statistics.median(fwd) / 1e3:6.1f} k frames/s received per side ({', '.join(f'{x / 1e3:.1f}' for x in fwd)})")
        else:
            print("dpdk-testpmd: not installed or no figure (apt-get install dpdk-dev)")
    elif replay:
        pps = statistics.median(x[1][0] for x in replay)
        gbps = statistics.median(x[1][1] for x in replay)
        print(f"{'tcpreplay':18s} {'(same veth)':20s} the engine's data frames replayed at top speed: "
              f"{pps / 1e3:6.1f} k frames/s, {gbps:.2f} Gb/s on the wire (after each run: "
              f"{', '.join(f'{x[1][0] / 1e3:.1f}' for x in replay)})")
        # Each run against the replay right after it, then the median.
        by_run = dict((i, x[0]) for i, x in replay)
        for cid, v in rows.items():
            r = [v[i][2] / by_run[i] for i in range(len(v)) if i in by_run]
            if r:
                print(f"{cid:18s} {'÷ tcpreplay':20s} run by run: {', '.join(f'{x:.2f}' for x in r)}; "
                      f"median {statistics.median(r):.2f}x")
    else:
        print("tcpreplay: not installed or no replay figure (apt-get install tcpreplay)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
