#!/usr/bin/python3
"""`mrct run | list | validate | explain` behave as documented in docs/cli.md.

Exit codes (0 pass, 1 a case failed, 2 plan or usage error), results.json and
junit.xml in --out (well-formed; identical for the same seed apart from wall
times), pcaps of failed cases, plan errors with file:line:col on stderr.
"""
import argparse
import json
import os
import re
import subprocess
import xml.etree.ElementTree as ET

from common import Failures

ap = argparse.ArgumentParser()
ap.add_argument("--mrct", required=True)
ap.add_argument("--plan", required=True)
ap.add_argument("--workdir", required=True)
args = ap.parse_args()
fails = Failures()


def mrct(*a):
    return subprocess.run([args.mrct, *a], capture_output=True, text=True)


def expect_rc(r, rc, what):
    if r.returncode != rc:
        fails.add(f"{what}: exit {r.returncode}, expected {rc}\nstdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-2000:]}")


r = mrct("validate", args.plan)
expect_rc(r, 0, "validate")
if "fewer cases than required" in r.stdout or "without a fault or negative case" in r.stdout:
    fails.add("the plan leaves a clause under-covered: " + r.stdout)

r = mrct("list", "--json", args.plan)
expect_rc(r, 0, "list --json")
cases = json.loads(r.stdout)
if len(cases) < 80:
    fails.add(f"the plan has {len(cases)} cases, fewer than 80")
if any(not c["clauses"] for c in cases):
    fails.add("a case cites no clause")

r = mrct("explain", args.plan, "RNR-001")
expect_rc(r, 0, "explain")
if "MR-RNR-4 (MUST) When the timer expires" not in r.stdout:
    fails.add("explain does not show the clause text")

out = os.path.join(args.workdir, "plan_cli_out")
r = mrct("run", args.plan, "--filter", "HDR-00*", "--filter", "SACK-001*", "--out", out, "--seed", "5")
expect_rc(r, 0, "run on the reference DUT")
first = open(os.path.join(out, "results.json")).read()
res = json.loads(first)
if res["schema"] != "mrct-results/1" or res["summary"].get("pass") != len(res["cases"]):
    fails.add("results.json summary is not all-pass")
junit = ET.parse(os.path.join(out, "junit.xml")).getroot()
if junit.tag != "testsuites" or int(junit.get("tests")) != len(res["cases"]) or int(junit.get("failures")) != 0:
    fails.add("junit.xml does not match the results")

r = mrct("run", args.plan, "--filter", "HDR-00*", "--filter", "SACK-001*", "--out", out, "--seed", "5")
strip = lambda s: re.sub(r'"wall_s": [0-9.e-]+', '"wall_s": 0', s)
if strip(open(os.path.join(out, "results.json")).read()) != strip(first):
    fails.add("the same seed gave different results")

bad_out = os.path.join(args.workdir, "plan_cli_bug")
r = mrct("run", args.plan, "--filter", "SACK-001*", "--dut", "sim:bug=no-fast-retx", "--out", bad_out)
expect_rc(r, 1, "run against no-fast-retx")
if "MR-SACK-3" not in r.stdout or "fast_retransmit" not in r.stdout:
    fails.add("the failure summary does not name the clause and assertion")
pcaps = os.listdir(os.path.join(bad_out, "pcap")) if os.path.isdir(os.path.join(bad_out, "pcap")) else []
if not any(p.startswith("SACK-001") for p in pcaps):
    fails.add(f"no pcap for the failed case: {pcaps}")
junit = ET.parse(os.path.join(bad_out, "junit.xml")).getroot()
if int(junit.get("failures")) < 1 or junit.find(".//failure") is None:
    fails.add("junit.xml lacks the failure")

broken = os.path.join(args.workdir, "broken_plan.yaml")
with open(broken, "w") as f:
    f.write("cases:\n  - id: X\n    clauses: [MR-HDR-1]\n    expect:\n      - wire_fromat: {}\n")
r = mrct("run", broken)
expect_rc(r, 2, "run with a bad plan")
if "broken_plan.yaml:5:9: unknown assertion 'wire_fromat'" not in r.stderr:
    fails.add("the plan error lacks file:line:col: " + r.stderr)
# An inconclusive case exits 0, or 1 with --fail-on-inconclusive: a write
# with no loss gives fast_retransmit nothing to judge.
undecided = os.path.join(args.workdir, "undecided.yaml")
with open(undecided, "w") as f:
    f.write("suite: {name: U}\ncases:\n  - id: U-1\n    title: nothing lost\n    clauses: [MR-SACK-3]\n"
            "    setup:\n      - post_write: {side: dut, size: 65536}\n    expect:\n      - fast_retransmit: {}\n")
r = mrct("run", undecided)
expect_rc(r, 0, "run with an inconclusive case")
if "1 inconclusive" not in r.stdout:
    fails.add("the undecided case was not inconclusive: " + r.stdout[-1000:])
r = mrct("run", undecided, "--fail-on-inconclusive")
expect_rc(r, 1, "run --fail-on-inconclusive with an inconclusive case")
if "1 cases inconclusive: exit 1 (--fail-on-inconclusive)" not in r.stdout:
    fails.add("--fail-on-inconclusive does not say why it exits 1: " + r.stdout[-1000:])
expect_rc(mrct("run", args.plan, "--filter", "HDR-001", "--fail-on-inconclusive"), 0,
          "run --fail-on-inconclusive where every case passed")

expect_rc(mrct("run", args.plan, "--dut", "bogus"), 2, "run with an unknown DUT")

# A plan given as its folder means the folder's plan.yaml (issue 23 item 5),
# in every command that takes a plan; a folder without one is a usage error.
folder = os.path.dirname(os.path.abspath(args.plan))
expect_rc(mrct("validate", folder), 0, "validate FOLDER")
r = mrct("list", "--json", folder)
expect_rc(r, 0, "list FOLDER")
if r.returncode == 0 and len(json.loads(r.stdout)) != len(cases):
    fails.add("list FOLDER lists another plan")
expect_rc(mrct("explain", folder, "RNR-001"), 0, "explain FOLDER CASE")
expect_rc(mrct("run", folder, "--filter", "HDR-001", "--out", os.path.join(args.workdir, "plan_cli_folder")), 0,
          "run FOLDER")
empty = os.path.join(args.workdir, "plan_cli_empty_folder")
os.makedirs(empty, exist_ok=True)
for cmd in (["run", empty], ["validate", empty], ["list", empty], ["explain", empty, "RNR-001"]):
    r = mrct(*cmd)
    expect_rc(r, 2, " ".join(cmd[:1]) + " on a folder without plan.yaml")
    if "holds no plan.yaml" not in r.stderr:
        fails.add(f"{cmd[0]} on a folder without plan.yaml does not say so: {r.stderr}")
expect_rc(mrct("run", args.plan, "--filter", "NO-SUCH-*"), 2, "run with a filter matching nothing")

# Limits and include roots (docs/plan-format.md, Limits): a limit lowered
# below what the plan needs refuses it where it crosses, naming the limit; an
# unknown one is a usage error; an include from outside the plan's folder
# loads only with --plan-include-root.
r = mrct("validate", args.plan, "--plan-limit", "cases=10")
expect_rc(r, 2, "validate with --plan-limit cases=10")
if "--plan-limit cases=N raises it" not in r.stderr:
    fails.add("a plan over the cases limit is not refused naming it: " + r.stderr[:500])
expect_rc(mrct("validate", args.plan, "--plan-limit", "cases=200", "--plan-limit", "nodes=64KiB"), 0,
          "validate with limits raised")
expect_rc(mrct("list", args.plan, "--plan-limit", "bananas=3"), 2, "an unknown --plan-limit")
inc_top = os.path.join(args.workdir, "plan_cli_inc", "top")
inc_shared = os.path.join(args.workdir, "plan_cli_inc", "shared")
os.makedirs(inc_top, exist_ok=True)
os.makedirs(inc_shared, exist_ok=True)
open(os.path.join(inc_top, "plan.yaml"), "w").write("suite: {name: S}\ninclude: [../shared/c.yaml]\n")
open(os.path.join(inc_shared, "c.yaml"), "w").write("cases:\n  - id: A\n    clauses: [MR-HDR-1]\n    expect: [{wire_format: {}}]\n")
r = mrct("validate", inc_top)
expect_rc(r, 2, "an include from outside the plan's folder")
if "plan.yaml:2:11: included file '../shared/c.yaml' is outside the plan's folder" not in r.stderr:
    fails.add("the include outside the plan's folder is not refused at its line: " + r.stderr[:500])
expect_rc(mrct("validate", inc_top, "--plan-include-root", inc_shared), 0, "--plan-include-root")

fails.finish("plan CLI behaviours")
