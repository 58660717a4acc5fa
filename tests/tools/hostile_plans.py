#!/usr/bin/python3
"""Malformed and hostile plans, one or more of each class issue 23 names, are
refused by every command that reads a plan: exit 2, the first line of stderr
naming the right file:line:col and saying what is wrong, within 256 MiB of
address space (not under a sanitizer, which reserves its own) and with no
sanitizer report (a report ends the process with another code).

The classes: numbers out of their field's range, duplicate keys, things a
parser accepts that are wrong, positions (every error has one), resource bombs
(size, nodes, aliases, nesting, sweeps, variables, fragments, bytes to move)
and includes (cycles, outside the plan's folder, not regular files). Under a
sanitizer (--sanitized ON) the resource bombs run through `mrct validate` only.

Each plan is written into --workdir; the large ones are generated. With
--max-seconds S (on demand, not in CI: docs/performance.md) a plan taking
longer than S seconds of CPU also fails; without it the times are printed.
"""
import argparse
import os
import resource
import subprocess
import sys
import time

from common import Failures, cmake_on

ap = argparse.ArgumentParser()
ap.add_argument("--mrct", required=True)
ap.add_argument("--workdir", required=True)
ap.add_argument("--sanitized", default="OFF", help="ON: a sanitizer build (no address-space limit)")
ap.add_argument("--max-seconds", type=float, default=0, help="fail a plan taking more CPU seconds than this")
ap.add_argument("--only", default="", help="comma-separated plan names")
args = ap.parse_args()
args.mrct = os.path.abspath(args.mrct)  # each plan runs in its own folder
sanitized = cmake_on(args.sanitized)
fails = Failures()
root = os.path.join(args.workdir, "hostile_plans")
os.makedirs(root, exist_ok=True)

HEAD = "suite: {name: hostile}\ncases:\n  - id: A\n    clauses: [MR-HDR-1]\n"
EXPECT = "    expect: [{all_complete: {}}]\n"


def case(body):
    """A one-case plan; `body` is the rest of the case (4-space indent)."""
    return HEAD + body + EXPECT


def setup(action):
    """A one-case plan whose setup is this one action (written at line 6, column 9)."""
    return case("    setup:\n      - " + action + "\n")


# name -> (files: {relative path: text or bytes}, expected "file:line:col" of the
# first error (file relative to the plan's folder), a fragment of its message).
# The plan is the first file.
CORPUS = {}
BOMBS = set()  # the resource bombs: under a sanitizer, `mrct validate` alone
section = ""


def plan(name, files, where, says):
    CORPUS[name] = (files, where, says)
    if section == "bombs":
        BOMBS.add(name)


# --- numbers: range-checked against the field they feed, never wrapped ------
# (name, the one setup action, where the error is on line 6, what it says)
for name, action, col, says in [
    ("size_2pow64_plus_1", "post_write: {side: dut, size: 18446744073709551617, count: 1}", 39, "'size' expects"),
    ("count_2pow32_plus_1", "post_write: {side: dut, size: 8, count: 4294967297}", 49, "'count' expects"),
    ("count_minus_1", "post_write: {side: dut, size: 8, count: -1}", 49, "'count' expects"),
    ("tag_70000", "post_recv: {side: peer, tag: 70000, size: 64}", 38, "'tag' expects"),
    ("region_1TiB", "memory: {size: 1099511627776}", 24, "'size' expects"),
    ("region_4GiB", "memory: {size: 4294967295}", 9, "the most one action may move or take"),
    ("writes_4e9", "post_write: {side: dut, size: 1, count: 4000000000}", 9, "the most one action may move or take"),
]:
    plan(name, {"p.yaml": setup(action)}, f"p.yaml:6:{col}", says)
plan("nth_2pow64_plus_1", {"p.yaml": case(
    "    steps:\n      - on: {match: {opcode: WRITE}, nth: 18446744073709551617}\n"
    "        do: [{drop: {dir: to_dut, count: 1}}]\n")}, "p.yaml:6:43", "nth")
plan("paths_huge", {"p.yaml": case("    topology: {paths: 18446744073709551617}\n")}, "p.yaml:5:23", "topology.paths must be")

# --- duplicate keys: YAML keeps one value and drops the other ---------------
plan("duplicate_cases", {"p.yaml": case("") + "cases:\n  - id: B\n    clauses: [MR-HDR-1]\n" + EXPECT},
     "p.yaml:6:1", "duplicate key 'cases'")
plan("duplicate_arg", {"p.yaml": setup("post_write: {side: dut, size: 8, size: 9}")},
     "p.yaml:6:42", "duplicate key 'size'")

# --- accepted by a parser although wrong ------------------------------------
plan("defaults_topology_impair", {"p.yaml": "suite: {name: h}\ndefaults:\n  topology: {paths: 2, impair: []}\n"
                                  "cases:\n  - id: A\n    clauses: [MR-HDR-1]\n" + EXPECT},
     "p.yaml:3:24", "unknown key 'impair' in defaults.topology")
plan("settle_soon", {"p.yaml": case("    limits: {settle: soon}\n")}, "p.yaml:5:22", "limits.settle")
plan("path_delay_banana", {"p.yaml": case("    topology: {path_delay: {banana: 5us}}\n")},
     "p.yaml:5:37", "'banana' is not a path number")
plan("ppsn_lots", {"p.yaml": case("    dut: {ppsn: lots}\n")}, "p.yaml:5:17", "unknown parameter 'ppsn'")
plan("unknown_bug", {"p.yaml": case("    dut: {bug: no-such-bug}\n")}, "p.yaml:5:16", "unknown bug profile")
plan("duration_0", {"p.yaml": case("    limits: {duration: 0}\n")}, "p.yaml:5:24", "limits.duration")
plan("cases_empty", {"p.yaml": "suite: {name: h}\ncases: []\n"}, "p.yaml:2:8", "the plan has no cases")
plan("no_cases_key", {"p.yaml": "suite: {name: h}\n"}, "p.yaml:1:1", "the plan has no cases")
plan("nul_byte", {"p.yaml": b"suite: {name: h}\ncases:\n  - id: \"A\0B\"\n    clauses: [MR-HDR-1]\n" + EXPECT.encode()},
     "p.yaml:3:9", "control character \\x00")
plan("escaped_control", {"p.yaml": "suite: {name: h}\ncases:\n  - id: \"A\\x01B\"\n    clauses: [MR-HDR-1]\n" + EXPECT},
     "p.yaml:3:9", "control character \\x01")
plan("second_document", {"p.yaml": case("") + "---\ncases: []\n"}, "p.yaml:6:1", "a second YAML document")

# --- positions: every error has one --------------------------------------------
plan("defaults_level", {"p.yaml": "suite: {name: h}\ndefaults:\n  level: bogus\ncases:\n  - id: A\n"
                        "    clauses: [MR-HDR-1]\n" + EXPECT}, "p.yaml:3:10", "level must be MUST or SHOULD")
plan("defaults_role", {"p.yaml": "suite: {name: h}\ndefaults:\n  role: bystander\ncases:\n  - id: A\n"
                       "    clauses: [MR-HDR-1]\n" + EXPECT}, "p.yaml:3:9", "role (the peer's) must be")
plan("quote_flow", {"p.yaml": "suite: {name: \"h}\n" + "cases:\n  - id: A\n    clauses: [MR-HDR-1]\n" + EXPECT},
     "p.yaml:1:15", "never ends")
plan("quote_block", {"p.yaml": HEAD + "    title: \"abc\n" + EXPECT}, "p.yaml:5:12", "never ends")
plan("quote_single", {"p.yaml": HEAD + "    title: 'it''s\n" + EXPECT}, "p.yaml:5:12", "never ends")
plan("include_cycle", {"p.yaml": "suite: {name: h}\ninclude: [a.yaml]\n", "a.yaml": "include: [b.yaml]\n",
                       "b.yaml": "include: [a.yaml]\n"}, "b.yaml:1:11", "include cycle: p.yaml -> a.yaml -> b.yaml")
plan("include_self", {"p.yaml": "suite: {name: h}\ninclude: [p.yaml]\n"}, "p.yaml:2:11", "include cycle")
plan("empty_file", {"p.yaml": ""}, "p.yaml:1:1", "the file is empty")
plan("comment_only", {"p.yaml": "# nothing here\n"}, "p.yaml:1:1", "the file is empty")
plan("scalar_file", {"p.yaml": "just words\n"}, "p.yaml:1:1", "a plan file is a map")
plan("deep_flow", {"p.yaml": "suite: {name: h}\nx: " + "[" * 200 + "]" * 200 + "\n"}, "p.yaml:2:68",
     "nested more than 64 levels deep")
plan("deep_block", {"p.yaml": "suite: {name: h}\nx:\n" + "".join("  " * (i + 1) + "a:\n" for i in range(200))},
     "p.yaml:66:129", "nested more than 64 levels deep")
plan("deep_100k", {"p.yaml": "x: " + "[" * 100000 + "]" * 100000 + "\n"}, "p.yaml:1:68", "nested more than 64 levels deep")
plan("deep_alias", {"p.yaml": "suite: {name: h}\na: &a " + "[" * 40 + "1" + "]" * 40 + "\nb: " + "[" * 30 + "*a" + "]" * 30 + "\n"},
     "p.yaml:3:34", "nested more than 64 levels deep")
plan("tab_indent", {"p.yaml": "suite: {name: h}\ncases:\n\t- id: A\n"}, "p.yaml:3:", "")

# --- resource bombs: refused before they are allocated ----------------------
section = "bombs"
plan("plan_50MB", {"p.yaml": lambda: (HEAD + EXPECT) + "".join(
    f"  - id: C{i}\n    clauses: [MR-HDR-1]\n" + EXPECT for i in range(700000))}, "p.yaml:1:1", "--plan-limit plan_bytes")
plan("nodes_1M", {"p.yaml": lambda: "suite: {name: h}\nx: [" + ",".join(["0"] * 1000000) + "]\n"},
     "p.yaml:2:399991", "--plan-limit nodes")
laughs = "suite: {name: h}\nl0: &a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + "".join(
    f"l{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 12))
plan("billion_laughs", {"p.yaml": laughs}, "p.yaml:7:14", "--plan-limit nodes")
plan("sweep_explosion", {"p.yaml": case("    sweep: {" + ", ".join(
    f"k{k}: [" + ",".join(str(v) for v in range(10)) + "]" for k in range(8)) + "}\n")},
     "p.yaml:5:121", "--plan-limit cases")
vars_bomb = "suite: {name: h}\nvars:\n  a0: \"xxxxxxxxxx\"\n" + "".join(
    f"  a{i}: \"" + "".join("${a%d}" % (i - 1) for _ in range(10)) + "\"\n" for i in range(1, 30))
plan("variable_expansion", {"p.yaml": vars_bomb + "cases:\n  - id: A\n    title: \"${a29}\"\n    clauses: [MR-HDR-1]\n" + EXPECT},
     "p.yaml:10:7", "--plan-limit expanded_bytes")
frags = "suite: {name: h}\nfragments:\n  f0: [" + ",".join(["{wire_format: }"] * 50) + "]\n" + "".join(
    f"  f{i}: [" + ",".join([f"{{use: f{i - 1}}}"] * 50) + "]\n" for i in range(1, 8))
plan("fragment_expansion", {"p.yaml": frags + "cases:\n  - id: A\n    clauses: [MR-HDR-1]\n    setup: [{use: f7}]\n" + EXPECT},
     "p.yaml:3:", "--plan-limit expanded_bytes")
plan("defaults_times_cases", {"p.yaml": lambda: "suite: {name: h}\ndefaults:\n  expect:\n" + "".join(
    f"    - frame_count: {{at_least: {i}}}\n" for i in range(3000)) + "cases:\n" + "".join(
    f"  - id: C{i}\n    clauses: [MR-HDR-1]\n" + EXPECT for i in range(3000))}, "p.yaml:", "--plan-limit expanded_bytes")
plan("unknown_keys_95k", {"p.yaml": lambda: case("    dut: {" + ", ".join(f"k{i}: v" for i in range(95000)) + "}\n")},
     "p.yaml:5:", "unknown parameter")

# --- includes: inside the plan's folder, regular files only -----------------
section = "includes"
plan("include_folder", {"p.yaml": "suite: {name: h}\ninclude: [sub]\n", "sub/x.yaml": "cases: []\n"},
     "p.yaml:2:11", "not a regular file")
plan("include_etc_passwd", {"p.yaml": "suite: {name: h}\ninclude: [/etc/passwd]\n"}, "p.yaml:2:11", "outside the plan's folder")
plan("include_dev_zero", {"p.yaml": "suite: {name: h}\ninclude: [/dev/zero]\n"}, "p.yaml:2:11", "outside the plan's folder")
plan("include_parent", {"p.yaml": "suite: {name: h}\ninclude: [../outside.yaml]\n"}, "p.yaml:2:11", "outside the plan's folder")
plan("include_missing", {"p.yaml": "suite: {name: h}\ninclude: [nope.yaml]\n"}, "p.yaml:2:11", "not found")


def materialise(name, files):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    for rel, text in files.items():
        p = os.path.join(d, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if callable(text):
            text = text()
        with open(p, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode())
    open(os.path.join(root, "outside.yaml"), "w").write("cases: []\n")  # what include_parent reaches for
    return d, os.path.join(d, next(iter(files)))


def limit_memory():
    if not sanitized:
        lim = 256 << 20
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))


def run(cmd, cwd):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit_memory)
    try:
        out, err = p.communicate(timeout=120)  # a hang guard, not a speed check
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return None, b"", b"timed out after 120 s", 120.0
    return p.returncode, out, err, time.monotonic() - t0


only = set(filter(None, args.only.split(",")))
rows = []
for name, (files, where, says) in CORPUS.items():
    if only and name not in only:
        continue
    d, path = materialise(name, files)
    commands = [["validate"], ["list"], ["run", "--out", os.path.join(d, "out")]]
    if sanitized and name in BOMBS:
        # The three commands read a plan with the same loader, where a bomb
        # stops; unoptimised and sanitized, parsing a bomb costs seconds per
        # command (33 s of CI's minutes for unknown_keys_95k alone). The
        # release build runs all three.
        commands = commands[:1]
    for cmd in commands:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        rc, out, err, wall = run([args.mrct, *cmd, os.path.basename(path)], d)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        first = err.decode(errors="replace").splitlines()[0] if err.strip() else ""
        what = f"{name}: mrct {cmd[0]}"
        if rc != 2:
            fails.add(f"{what}: exit {rc}, expected 2 (a plan error)\nstderr: {err.decode(errors='replace')[-1500:]}")
        elif not first.startswith(where):
            fails.add(f"{what}: the first error is at the wrong place (expected {where}...):\n  {first[:300]}")
        elif says not in first:
            fails.add(f"{what}: the first error does not say '{says}':\n  {first[:300]}")
        if b"Sanitizer" in err or b"runtime error:" in err:
            fails.add(f"{what}: a sanitizer report:\n{err.decode(errors='replace')[-3000:]}")
        if args.max_seconds and cpu > args.max_seconds:
            fails.add(f"{what}: {cpu:.2f} CPU seconds, more than {args.max_seconds}")
        rows.append((name, cmd[0], rc, cpu, wall, first[:110]))

peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"{'plan':28} {'command':9} rc  cpu s  wall s  first error")
for name, cmd, rc, cpu, wall, first in rows:
    print(f"{name:28} {cmd:9} {rc!s:3} {cpu:5.2f} {wall:7.2f}  {first}")
print(f"{len(CORPUS) if not only else len(only)} plans x 3 commands{' (the resource bombs: validate only)' if sanitized else ''}; the largest child's peak RSS: {peak / 1024:.1f} MiB; "
      f"address space limited to 256 MiB: {'no (sanitizer)' if sanitized else 'yes'}")
fails.finish(f"{len(rows)} hostile plan runs")
