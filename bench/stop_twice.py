#!/usr/bin/python3
"""How long `mrct run` takes to write its reports once stopped twice (D143):
a CI runner that cancels a job sends SIGINT, then SIGTERM, then SIGKILL a
few seconds later (GitHub Actions: 7.5 s, then 2.5 s). The whole plan
against the simulated DUT, --repeat R, stopped at S seconds by SIGINT and
0.1 s later by SIGTERM: the seconds from the second signal to the exit,
and to results.json and junit.xml being in place (written before
report.html), and the cases reported. Run on demand; figures in docs/performance.md.

  /usr/bin/python3 bench/stop_twice.py [--mrct build/mrct] [--at 8,12,20] [--repeat 20] [--capture all]
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--mrct", default=os.path.join(ROOT, "build", "mrct"))
ap.add_argument("--plan", default=os.path.join(ROOT, "testplans", "metaroce-1.2", "plan.yaml"))
ap.add_argument("--at", default="8,12,20", help="seconds into the run of the first signal, comma-separated")
ap.add_argument("--repeat", type=int, default=20)
ap.add_argument("--capture", default="all", choices=["all", "fail", "none"])
args = ap.parse_args()

for at in (float(x) for x in args.at.split(",")):
    out = tempfile.mkdtemp(prefix="mrct-stop-twice-")
    p = subprocess.Popen([args.mrct, "-q", "run", args.plan, "--dut", "sim", "--out", out, "--repeat", str(args.repeat),
                          "--capture", args.capture], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(at)
    p.send_signal(signal.SIGINT)
    time.sleep(0.1)
    p.send_signal(signal.SIGTERM)
    t = time.monotonic()
    first = None  # when results.json and junit.xml were in place
    while p.poll() is None:
        if first is None and all(os.path.exists(os.path.join(out, f)) for f in ("results.json", "junit.xml")):
            first = time.monotonic() - t
        time.sleep(0.005)
    dt = time.monotonic() - t
    if first is None:
        first = dt
    res = json.load(open(os.path.join(out, "results.json")))
    cut = sum(1 for c in res["cases"] if c.get("interrupted"))
    print(f"stopped at {at:.0f} s: results.json and junit.xml {first:.2f} s, exit {p.returncode} {dt:.2f} s after the second signal; "
          f"{len(res['cases'])} cases reported, {cut} cut short")
    shutil.rmtree(out, ignore_errors=True)
