"""The passive kill matrix (issue 24): each bug profile of mrct-refnic on side A
of the interop lab (tests/tools/interop_check.py: two mrct-refnic through
`mrct emulate` with loss, reordering and duplication), B the reference. For
each profile: whether `mrct interop` saw the workload fail, and which checks
of `mrct check` failed A (with their clauses), and whether any failed B
(which would be a false failure of the conforming side).

  sudo /usr/bin/python3 bench/interop_kill_matrix.py [--build DIR] [--runs N] [PROFILE...]

On demand, about 8 s per profile and run; the table goes to docs/emulator.md.
A profile no check catches is not a defect of the profile: most need a
scenario the plan builds on purpose (a loss at a known place, a grant that
binds), which arbitrary traffic does not (docs/emulator.md "The passive
profile")."""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "tools"))
from interop_check import Lab, one_run  # noqa: E402
from wire_lab import as_root  # noqa: E402


def profiles(mrct):
    out = subprocess.run([mrct, "docs", "bugs"], capture_output=True, text=True).stdout
    names = []
    for line in out.splitlines():
        if line.startswith("| `"):
            names.append((line.split("`")[1], line.split("|")[2].strip()))
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("only", nargs="*")
    args = ap.parse_args()
    args.mrct = os.path.abspath(os.path.join(args.build, "mrct"))
    args.refnic = os.path.abspath(os.path.join(args.build, "mrct-refnic"))
    work = tempfile.mkdtemp(prefix="mrct-interop-kill-")
    rows = []
    with Lab() as lab:
        for name, breaks in profiles(args.mrct):
            if args.only and name not in args.only:
                continue
            caught_by, interop_failed, b_failed = set(), 0, set()
            for k in range(args.runs):
                w = os.path.join(work, f"{name}-{k}")
                os.makedirs(w)
                io, _, _, results = one_run(args, lab, w, name)
                interop_failed += io.returncode != 0
                for c in results["cases"]:
                    if c["verdict"] != "fail":
                        continue
                    who, check = c["id"].split("/")
                    if who == lab.ip["a"]:
                        caught_by.add(f"{check} ({', '.join(c['clauses'])})")
                    else:
                        b_failed.add(check)
            cites = any(cl in s for s in caught_by for cl in breaks.split(", "))
            row = (f"| `{name}` | {breaks} | {interop_failed}/{args.runs} | "
                   f"{'; '.join(sorted(caught_by)) or '—'} | {'yes' if cites else 'no'} | {', '.join(sorted(b_failed)) or '—'} |")
            print(row, flush=True)
            rows.append(row)
    print("\n| profile | breaks | interop failed | checks failing A | a check cites its clause | checks failing B (conforming) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(r)
    print(f"(work folder {work})")


if __name__ == "__main__":
    sys.exit(main() if as_root() else 77)
