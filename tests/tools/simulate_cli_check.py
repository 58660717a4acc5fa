#!/usr/bin/python3
"""`mrct simulate` on the command line behaves as docs/simulate.md says.

Repeatable options add up (--path-delay, --fail-path, --impair); bad options
exit 2 with the reason on stderr (YAML errors with file:line:column); --help
names every bug profile `mrct docs bugs` lists.
"""
import argparse
import json
import os
import subprocess

from common import Failures

ap = argparse.ArgumentParser()
ap.add_argument("--mrct", required=True)
ap.add_argument("--workdir", required=True)
args = ap.parse_args()
fails = Failures()
small = ["--messages", "2", "--size", "65536"]


def sim(*a):
    return subprocess.run([args.mrct, "simulate", *a], capture_output=True, text=True)


def ok_json(r, what):
    if r.returncode != 0:
        fails.add(f"{what}: exit {r.returncode}, expected 0\nstderr: {r.stderr[-2000:]}")
        return None
    return json.loads(r.stdout)


def refused(r, what, text):
    if r.returncode != 2:
        fails.add(f"{what}: exit {r.returncode}, expected 2 (usage)")
    if text not in r.stderr:
        fails.add(f"{what}: stderr lacks {text!r}: {r.stderr[-500:]}")


# --path-delay given twice: both paths are slower (this once stopped at "At Most 1").
j = ok_json(sim(*small, "--path-delay", "1:50us", "--path-delay", "2:50us"), "--path-delay twice")
if j:
    srtt = [p["srtt_us"] for p in j["sender0_paths"]]
    if not (srtt[1] > 90 and srtt[2] > 90 and max(srtt[0], *srtt[3:]) < 50):
        fails.add(f"--path-delay twice: per-path SRTT {srtt} (paths 1 and 2 should be ~100 us slower)")

# --impair given twice, in order, with its counters in the output.
j = ok_json(sim(*small, "--impair", "duplicate:p=1,path=0", "--impair", "ecn_mark:p=0,dir=to_sender"), "--impair twice")
if j:
    kinds = [x["kind"] for x in j.get("impair", [])]
    if kinds != ["duplicate", "ecn_mark"]:
        fails.add(f"--impair twice: impair list {kinds}")
    elif j["impair"][0]["duplicated"] != j["impair"][0]["in"] or j["receiver"]["duplicates"] == 0:
        fails.add(f"--impair duplicate:p=1: {j['impair'][0]}, receiver {j['receiver']}")

refused(sim("--impair", "corrupt:q=1"), "--impair unknown parameter", "unknown parameter 'q'")
refused(sim("--impair", "corrupt:p=0.1,path=9"), "--impair path out of range", "path 9 is out of range (paths 0..7)")
refused(sim("--impair", "nosuch"), "--impair unknown stage", "unknown stage 'nosuch'")

cfg = os.path.join(args.workdir, "simulate_cli_bad.yaml")
with open(cfg, "w") as f:
    f.write("messages: 2\nimpair:\n  - corrupt: {p: 0.5, bits: 0}\n")
refused(sim("--config", cfg), "YAML impair out of range", f"{cfg}:3:5:")

h = sim("--help")
names = [line.split("`")[1] for line in subprocess.run([args.mrct, "docs", "bugs"], capture_output=True,
                                                       text=True).stdout.splitlines() if line.startswith("| `")]
if len(names) < 15:
    fails.add(f"mrct docs bugs lists {len(names)} profiles")
missing = [n for n in names if n not in h.stdout]
if missing:
    fails.add(f"simulate --help does not name bug profiles {missing}")

fails.finish("mrct simulate command line")
