#!/usr/bin/python3
"""Generated reference sections in docs/ equal what the code declares now."""
import argparse
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--mrct", required=True)
ap.add_argument("--docs", required=True)
ap.add_argument("--plan", required=True)
args = ap.parse_args()
bad = 0
for what, page, extra in (("fabric", "fabric.md", []), ("bugs", "bug-profiles.md", []),
                          ("assertions", "assertions.md", []), ("clauses", "clauses.md", ["--plan", args.plan]),
                          ("limits", "plan-format.md", [])):
    want = subprocess.run([args.mrct, "docs", what, *extra], capture_output=True, text=True, check=True).stdout
    text = open(f"{args.docs}/{page}").read()
    begin = text.index("<!-- BEGIN generated")
    begin = text.index("\n", begin) + 1
    end = text.index("<!-- END generated -->")
    if text[begin:end] != want:
        print(f"docs/{page} is out of date: regenerate with `mrct docs {what} {' '.join(extra)}`")
        bad += 1
print("5 passed, 0 failed" if not bad else f"{5 - bad} passed, {bad} failed")
sys.exit(1 if bad else 0)
