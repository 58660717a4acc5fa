#!/usr/bin/python3
"""Where `mrct run --out` cannot write (issue 22 item 6, docs/cli.md):

1. a regular file where the folder should be: exit 2 before the first case,
   the message names the path and the reason;
2. a read-only mount (tmpfs mounted ro; root): exit 2 before the first case,
   "Read-only file system";
3. a disk that fills during the run (a 96 KiB tmpfs; root): the check before
   the run passes, the captures and reports that do not fit fail with "No
   space left on device" named, exit 3, and no partial (.tmp) file is left.
Without root, 2 and 3 are skipped with a SKIP line; 1 runs everywhere."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import check_setup  # noqa: E402

args, work, fails = check_setup("output_check")


def run(out, *extra):
    return subprocess.run([args.mrct, "run", args.plan, "--filter", "HDR-00*", "--out", out, *extra],
                          capture_output=True, text=True, timeout=300)


def before_first_case(name, r, reason):
    if r.returncode != 2:
        fails.add(f"{name}: exit {r.returncode}, expected 2\n{r.stdout[-400:]}{r.stderr[-400:]}")
    if "[1/" in r.stdout:
        fails.add(f"{name}: a case ran before the output folder was found wanting")
    if reason not in r.stderr:
        fails.add(f"{name}: the message does not say '{reason}': {r.stderr.strip()[-300:]}")


# 1. a file in the folder's place
blocker = os.path.join(work, "a-file")
open(blocker, "w").write("not a folder\n")
before_first_case("a file in its place", run(blocker), "a file of that name is in the way")

# 2 and 3 need mounts (root)
if os.geteuid() != 0:
    print("SKIP: read-only mount and full disk need root")
else:
    ro = os.path.join(work, "ro")
    os.makedirs(ro)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", ro]).returncode != 0:
        print("SKIP: cannot mount a tmpfs here")
    else:
        try:
            before_first_case("a read-only mount", run(os.path.join(ro, "out")), "Read-only file system")
        finally:
            subprocess.run(["umount", ro])
        full = os.path.join(work, "full")
        os.makedirs(full)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", full], check=True)
        try:
            r = run(full, "--capture", "all")
            if r.returncode != 3:
                fails.add(f"a full disk: exit {r.returncode}, expected 3\n{r.stdout[-400:]}{r.stderr[-400:]}")
            if "No space left on device" not in r.stderr:
                fails.add(f"a full disk: the reason is not named: {r.stderr.strip()[-400:]}")
            if "[1/" not in r.stdout:
                fails.add("a full disk: no case ran (the check before the run should pass)")
            left = [os.path.join(d, f) for d, _, fs in os.walk(full) for f in fs if f.endswith(".tmp")]
            if left:
                fails.add(f"a full disk: partial files left: {left}")
        finally:
            subprocess.run(["umount", full])

fails.finish("output folder: a file in its place, a read-only mount, a full disk")
