#!/usr/bin/python3
"""Regenerates the seed corpus: every catalog frame, a few random frames of every
opcode (IPv4 and IPv6), and each as raw IP too. Run from the repo root:
    /usr/bin/python3 fuzz/make_corpus.py build/mrct
"""
import os
import struct
import subprocess
import sys
import tempfile

mrct = sys.argv[1]
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
os.makedirs(out, exist_ok=True)


def frames(pcap):
    data = open(pcap, "rb").read()
    off = 24
    while off < len(data):
        incl = struct.unpack_from("<I", data, off + 8)[0]
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


with tempfile.TemporaryDirectory() as d:
    sets = [("catalog", []), ("rand4", ["--random", "3", "--seed", "1", "--ip", "4"]),
            ("rand6", ["--random", "2", "--seed", "2", "--ip", "6"])]
    for name, extra in sets:
        p = os.path.join(d, name + ".pcap")
        subprocess.run([mrct, "-q", "samples", "-o", p, *extra], check=True)
        for i, f in enumerate(frames(p)):
            open(os.path.join(out, f"{name}-{i:03d}-eth"), "wb").write(f)
            ip_off = 18 if f[12:14] == b"\x81\x00" else 14
            open(os.path.join(out, f"{name}-{i:03d}-ip"), "wb").write(f[ip_off:])
