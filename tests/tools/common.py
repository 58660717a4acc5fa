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


def check_setup(name, *extra_binaries):
    """The arguments of a check that runs mrct on a plan (--mrct, --plan,
    --workdir, and --NAME for each extra binary), a fresh folder NAME under
    --workdir, and its Failures: (args, work, fails)."""
    import argparse
    import shutil
    ap = argparse.ArgumentParser()
    for b in ("mrct", *extra_binaries):
        ap.add_argument(f"--{b}", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    work = os.path.join(args.workdir, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    return args, work, Failures()


def cmake_on(value):
    """A CMake boolean passed on a test's command line (`--sanitized
    ${MRCT_SANITIZE}`): ON, 1, TRUE or YES in any case."""
    return value.upper() in ("ON", "1", "TRUE", "YES")
