#!/usr/bin/python3
"""`mrct decode` and `mrct samples` behave as documented in docs/cli.md.

Exit codes, stdout carrying only machine output (logs on stderr, even with -v),
one line per frame, dropped frames reported with their reason, usage errors.
"""
import argparse
import json
import subprocess

from common import Failures, make_pcap

ap = argparse.ArgumentParser()
ap.add_argument("--mrct", required=True)
ap.add_argument("--workdir", required=True)
args = ap.parse_args()
fails = Failures()


def mrct(*a):
    return subprocess.run([args.mrct, *a], capture_output=True, text=True)


catalog = make_pcap(args.mrct, args.workdir, "cli_catalog.pcap")

r = mrct("-v", "decode", "--json", catalog)
if r.returncode != 0:
    fails.add(f"decode --json exit {r.returncode}")
lines = r.stdout.splitlines()
try:
    objs = [json.loads(x) for x in lines]
except json.JSONDecodeError as e:
    objs = []
    fails.add(f"stdout is not pure JSON lines with -v: {e}")
if len(objs) != 22:
    fails.add(f"expected 22 JSON objects, got {len(objs)}")
if "22 frames" not in r.stderr:
    fails.add(f"summary missing on stderr: {r.stderr!r}")
names = sorted({o["bth"]["opcode_name"] for o in objs})
if names != sorted(["WRITE", "WRITE_IMM", "SEND", "SEND_IMM", "ACK", "NAK", "RNR", "CTRL"]):
    fails.add(f"opcodes seen: {names}")
if not all(o["ok"] and o["icrc_ok"] for o in objs):
    fails.add("a catalog frame did not decode with a good ICRC")

r = mrct("decode", catalog)
if r.returncode != 0 or len(r.stdout.splitlines()) != 22:
    fails.add(f"text decode: exit {r.returncode}, {len(r.stdout.splitlines())} lines")
if "WRITE qp=0x000123 psn=1000" not in r.stdout:
    fails.add("text summary lacks the WRITE line")

r = mrct("decode", "-c", "3", catalog)
if len(r.stdout.splitlines()) != 3:
    fails.add("-c 3 did not stop after 3 frames")

# pcapng (converted by Wireshark's editcap) decodes the same.
ng = f"{args.workdir}/cli_catalog.pcapng"
subprocess.run(["editcap", "-F", "pcapng", catalog, ng], check=True, capture_output=True)
r_ng = mrct("-q", "decode", "--json", ng)
if [json.loads(x)["bth"] for x in r_ng.stdout.splitlines()] != [o["bth"] for o in objs]:
    fails.add("pcapng decode differs from pcap decode")

# A corrupted frame is reported as a drop, the run still succeeds.
data = bytearray(open(catalog, "rb").read())
first_len = int.from_bytes(data[32:36], "little")
data[24 + 16 + first_len - 6] ^= 0x01
bad = f"{args.workdir}/cli_corrupt.pcap"
open(bad, "wb").write(bytes(data))
r = mrct("decode", "--json", bad)
first = json.loads(r.stdout.splitlines()[0])
if r.returncode != 0 or first["ok"] or first["drop"]["reason"] != "bad_icrc" or first["icrc_ok"]:
    fails.add(f"corrupt frame not reported as bad_icrc: {first.get('drop')}")
r = mrct("decode", "--json", "--no-icrc", bad)
if not json.loads(r.stdout.splitlines()[0])["ok"]:
    fails.add("--no-icrc still dropped the frame")

# Errors: missing file is an infrastructure error (3), usage errors are 2.
r = mrct("decode", f"{args.workdir}/does-not-exist.pcap")
if r.returncode != 3 or "does-not-exist.pcap" not in r.stderr or r.stdout:
    fails.add(f"missing file: exit {r.returncode}, stderr {r.stderr!r}")
for argv in ([], ["decode"], ["frobnicate"], ["samples", "-o", "x.pcap", "--ip", "5"]):
    r = mrct(*argv)
    if r.returncode != 2:
        fails.add(f"mrct {' '.join(argv)}: exit {r.returncode}, want 2")
r = mrct("samples", "-o", f"{args.workdir}/x.pcap", "--random", "1", "--opcode", "NOPE")
if r.returncode != 2 or "NOPE" not in r.stderr:
    fails.add(f"unknown opcode: exit {r.returncode}")
r = mrct("--help")
if r.returncode != 0 or "decode" not in r.stdout:
    fails.add("--help does not list decode")
r = mrct("--version")
if r.returncode != 0 or "metaroce-1.2-model" not in r.stdout:
    fails.add(f"--version: {r.stdout!r}")

# Same seed, same bytes.
a = make_pcap(args.mrct, args.workdir, "cli_seed_a.pcap", "--random", "5", "--seed", "3")
b = make_pcap(args.mrct, args.workdir, "cli_seed_b.pcap", "--random", "5", "--seed", "3")
if open(a, "rb").read() != open(b, "rb").read():
    fails.add("same seed produced different captures")

fails.finish("CLI decode/samples behaviour")
