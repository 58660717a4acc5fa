#!/usr/bin/python3
"""The official plan's behaviour, approved (issue 23): its results.json
against the reference DUT (seed 1, the plan given by its path inside the
source tree) less wall times and host name, and the selftest's kill matrix,
are byte-identical to the committed baselines in tests/approved/metaroce-1.2/.

A restructuring of the engine must leave both as they were. A change that
means to change them (a new case, a seed derivation) runs this with --update
in its own commit, and the diff of results.digest shows, case by case, what
moved: one line per case with its verdict, reason, sizes and a digest of its
whole entry; the first line is the digest of the whole document.

ctest runs it after plan_reference_run and selftest_metaroce_1_2, whose
outputs it reads (fixture plan_outputs).
"""
import argparse
import difflib
import hashlib
import json
import os
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--results", required=True, help="results.json of `mrct run testplans/metaroce-1.2/plan.yaml`")
ap.add_argument("--kill-matrix", required=True, help="kill-matrix.json of `mrct selftest`")
ap.add_argument("--approved", required=True, help="the baselines' folder")
ap.add_argument("--update", action="store_true", help="rewrite the baselines from these outputs")
args = ap.parse_args()


def sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


def digest(path):
    j = json.load(open(path))
    j.pop("host", None)  # where it ran
    for c in j["cases"]:
        c.pop("wall_s", None)  # how long it took
    lines = ["document " + sha(json.dumps(j, ensure_ascii=False))]
    for c in j["cases"]:
        verdicts = "".join(a["verdict"][0] for a in c.get("assertions", []))
        lines.append(f"{c['id']} {c['verdict']} seed={c['seed']} sim_time_us={c['sim_time_us']} frames={c['frames']} "
                     f"assertions={verdicts} entry={sha(json.dumps(c, ensure_ascii=False))[:16]} reason={c['reason']!r}")
    return "\n".join(lines) + "\n"


got = {"results.digest": digest(args.results), "kill-matrix.json": open(args.kill_matrix).read()}
if args.update:
    os.makedirs(args.approved, exist_ok=True)
    for name, text in got.items():
        open(os.path.join(args.approved, name), "w").write(text)
    print(f"approved: {', '.join(got)} in {args.approved}")
    sys.exit(0)

bad = 0
for name, text in got.items():
    path = os.path.join(args.approved, name)
    want = open(path).read() if os.path.exists(path) else ""
    if text != want:
        bad += 1
        print(f"MISMATCH: {name} differs from {path} (what changed, baseline first):")
        diff = list(difflib.unified_diff(want.splitlines(), text.splitlines(), "approved", "this build", lineterm="", n=0))
        print("\n".join(diff[:80]) + ("\n..." if len(diff) > 80 else ""))
if bad:
    print("FAILED: the official plan's behaviour changed. If that is meant, rerun with --update in its own commit.")
    sys.exit(1)
print(f"OK: results ({got['results.digest'].count(chr(10)) - 1} cases) and kill matrix as approved")
