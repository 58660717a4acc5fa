"""Helpers shared by the independent-decoder checks (run by ctest with /usr/bin/python3)."""
import json
import os
import subprocess
import sys


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.stderr.write(f"command failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}\n")
        sys.exit(1)
    return r.stdout


def mrct_json(mrct, pcap, payload=False):
    cmd = [mrct, "-q", "decode", "--json", pcap]
    if payload:
        cmd.insert(3, "--payload")
    return [json.loads(line) for line in run(cmd).splitlines()]


def make_pcap(mrct, workdir, name, *args):
    path = os.path.join(workdir, name)
    run([mrct, "-q", "samples", "-o", path, *args])
    return path


class Failures:
    def __init__(self, limit=20):
        self.items = []
        self.limit = limit

    def add(self, msg):
        self.items.append(msg)
        if len(self.items) <= self.limit:
            print("MISMATCH:", msg)

    def finish(self, checked_desc):
        if self.items:
            print(f"FAILED: {len(self.items)} mismatches ({checked_desc})")
            sys.exit(1)
        print(f"OK: {checked_desc}")
