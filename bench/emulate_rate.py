"""mrct emulate on veths (issue 24): forwarding rate with the stages idle, and
how close the delay a frame really had comes to the delay the stages meant.

  sudo /usr/bin/python3 bench/emulate_rate.py [--build DIR] [--seconds S] [--dpdk]

Three namespaces, as tests/tools/interop_check.py builds them: tcpreplay in A
replays 4 KiB MetaRoCE frames (8 source ports, addressed to a MAC nobody has,
so B's kernel drops them unread) through the emulator to B. Runs:

  baseline   tcpreplay --topspeed into a veth whose peer nobody forwards: what
             the replay tool itself reaches on this host
  rate       the same through `mrct emulate` (no stage, --no-capture)
  accuracy   10 k frames/s through `mrct emulate` with 0, 50 us and 500 us of
             delay: the error's median and p99 (emulate.json delay_error)

With --dpdk the emulator's two ports are DPDK's net_af_packet on its veth
ends (dpdk:0, dpdk:1, always --busy-poll), and a fourth run puts
dpdk-testpmd io forwarding between the same two ports in its place:

  testpmd    tcpreplay --topspeed through testpmd io forwarding (same ports)

Prints one line per run; the figures go to docs/performance.md."""
import argparse
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "tools"))
from interop_check import Lab  # noqa: E402
from wire_lab import as_root, sh  # noqa: E402


def write_pcap(path, n_ports=8, payload=4096, frames=4096):
    """4 KiB WRITE-sized MetaRoCE frames (UDP to 4791; the emulator reads no further)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i in range(frames):
            udp_len = 8 + 12 + 32 + payload + 4
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 2, 20 + udp_len, 0, 0x4000, 64, 17, 0,
                             bytes([10, 215, 0, 1]), bytes([10, 215, 0, 2]))
            udp = struct.pack("!HHHH", 0xC000 + i % n_ports, 4791, udp_len, 0)
            body = bytes(12 + 32 + payload + 4)
            eth = bytes([2, 0, 0, 0, 0, 0x99]) + bytes([2, 0, 0, 0, 0, 1]) + b"\x08\x00"
            frame = eth + ip + udp + body
            f.write(struct.pack("<IIII", 0, i, len(frame), len(frame)))
            f.write(frame)


def replay(lab, pcap, args_extra, seconds):
    r = subprocess.run(["ip", "netns", "exec", lab.ns["a"], "tcpreplay", "-q", "-i", lab.dev["a"], *args_extra,
                        "--loop", "0", "--duration", str(seconds), pcap], capture_output=True, text=True)
    out = r.stdout + r.stderr
    pps = 0.0
    for line in out.splitlines():
        if "Rated:" in line and "pps" in line:
            pps = float(line.split(",")[2].split()[0])
    return pps, out


def dpdk_eal(lab):
    """The emulator's EAL over its two veth ends (net_af_packet, no hugepages), on core 1."""
    vdev = "blocksz=16384,framesz=16384,framecnt=512"
    return (f"--no-huge --file-prefix=emu{os.getpid()} -l 1 -m 512 --no-pci "
            f"--vdev=net_af_packet0,iface={lab.dev['ea']},{vdev} --vdev=net_af_packet1,iface={lab.dev['eb']},{vdev}")


def emulate(lab, mrct, cfg_text, out, extra=(), dpdk=False):
    cfg = os.path.join(out, "fabric.yaml")
    os.makedirs(out, exist_ok=True)
    open(cfg, "w").write(cfg_text)
    ports = ["--port-a", "dpdk:0", "--port-b", "dpdk:1", "--eal", dpdk_eal(lab), "--busy-poll"] if dpdk else \
        ["--port-a", lab.dev["ea"], "--port-b", lab.dev["eb"]]
    return subprocess.Popen(["ip", "netns", "exec", lab.ns["e"], mrct, "emulate", *ports, "--config", cfg, "--out", out,
                             "--progress", "0", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def testpmd_forward(lab, pcap, seconds):
    """dpdk-testpmd io forwarding between the emulator's two ports (same EAL
    vdevs) while tcpreplay offers the frames: (offered, forwarded) frames/s."""
    eal = dpdk_eal(lab).replace(" -l 1 ", " -l 0,1 ").replace("--file-prefix=emu", "--file-prefix=tpemu")
    p = subprocess.Popen(["ip", "netns", "exec", lab.ns["e"], "dpdk-testpmd", *eal.split(), "--", "-i", "--no-mlockall",
                          "--total-num-mbufs=8192", "--mbuf-size=16512", "--forward-mode=io"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(3)
    p.stdin.write("start\n")
    p.stdin.flush()
    time.sleep(0.5)
    pps, _ = replay(lab, pcap, ["--topspeed"], seconds)
    p.stdin.write("stop\nquit\n")
    p.stdin.flush()
    out = p.communicate(timeout=30)[0]
    # The forward statistics of port 1: what it sent (frames that came in on port 0).
    blocks = out.split("Forward statistics for port 1")
    fwd = 0
    if len(blocks) > 1:
        for line in blocks[1].splitlines():
            if "TX-packets:" in line:
                fwd = int(line.split("TX-packets:")[1].split()[0])
                break
    return pps, fwd / seconds


def stop(p, out):
    p.send_signal(signal.SIGINT)
    p.wait(timeout=30)
    return json.load(open(os.path.join(out, "emulate.json")))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--dpdk", action="store_true", help="the emulator on DPDK ports (net_af_packet), beside testpmd io")
    args = ap.parse_args()
    mrct = os.path.abspath(os.path.join(args.build, "mrct"))
    work = tempfile.mkdtemp(prefix="mrct-emulate-rate-")
    pcap = os.path.join(work, "frames.pcap")
    write_pcap(pcap)
    with Lab() as lab:
        # Baseline: the replay tool alone (the emulator's port drops nothing: nobody reads it).
        pps, _ = replay(lab, pcap, ["--topspeed"], args.seconds)
        print(f"baseline   tcpreplay --topspeed into the veth: {pps:,.0f} frames/s ({pps * 4188 * 8 / 1e9:.2f} Gb/s)")
        out = os.path.join(work, "rate")
        p = emulate(lab, mrct, "paths: 8\n", out, ["--no-capture"], dpdk=args.dpdk)
        time.sleep(0.5)
        pps, _ = replay(lab, pcap, ["--topspeed"], args.seconds)
        j = stop(p, out)
        a = j["ports"]["a"]
        fwd = j["directions"]["a_to_b"]["frames_out"]
        print(f"rate       through mrct emulate{' (DPDK ports, busy)' if args.dpdk else ''} (no stage, no capture): offered {pps:,.0f} frames/s; forwarded {fwd:,} of "
              f"{a['frames_in']:,} read, {a['lost_in']:,} lost in the {'port' if args.dpdk else 'capture buffer'}; "
              f"{fwd / args.seconds:,.0f} frames/s over the replay ({fwd / args.seconds * 4188 * 8 / 1e9:.2f} Gb/s); "
              f"delay error median {j['delay_error']['median_ns'] / 1e3:.1f} us, p99 {j['delay_error']['p99_ns'] / 1e3:.1f} us")
        if args.dpdk:
            if shutil.which("dpdk-testpmd"):
                offered, fps = testpmd_forward(lab, pcap, args.seconds)
                print(f"testpmd    io forwarding on the same two ports: offered {offered:,.0f} frames/s; "
                      f"forwarded {fps:,.0f} frames/s ({fps * 4188 * 8 / 1e9:.2f} Gb/s)")
            else:
                print("testpmd    not installed (apt-get install dpdk-dev)")
        for busy in ((True,) if args.dpdk else (False, True)):
            for delay in ("0us", "50us", "500us"):
                out = os.path.join(work, f"acc-{delay}-{busy}")
                p = emulate(lab, mrct, f"paths: 8\ndelay: {delay}\n", out,
                            ["--busy-poll"] if busy and not args.dpdk else [], dpdk=args.dpdk)
                time.sleep(0.5)
                replay(lab, pcap, ["--pps", "10000"], args.seconds)
                j = stop(p, out)
                e = j["delay_error"]
                print(f"accuracy   delay {delay:>5} at 10 k frames/s{' --busy-poll' if busy else ''}: {e['frames']:,} frames, "
                      f"error median {e['median_ns'] / 1e3:.1f} us, p99 {e['p99_ns'] / 1e3:.1f} us, max {e['max_ns'] / 1e3:.1f} us")
    print(f"(work folder {work})")


if __name__ == "__main__":
    sys.exit(main() if as_root() else 77)
