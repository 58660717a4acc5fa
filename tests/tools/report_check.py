#!/usr/bin/python3
"""The reports of `mrct run --out` (docs/reports.md):

1. approval: with a fixed seed and times stripped, results.json, junit.xml and
   the text of report.html equal the committed baselines (tests/reports/approved;
   --update rewrites them);
2. junit.xml validates against tests/reports/junit.xsd (xmllint), results.json
   against docs/results.schema.json (python3-jsonschema); broken ones do not
   (negative controls);
3. sharding: 3 shards merged with `mrct report merge` give the unsharded run's
   JSON, JUnit and HTML (times stripped);
4. an interrupted run (SIGINT, SIGTERM, SIGHUP) leaves valid JSON/JUnit/HTML covering the
   finished cases, and no partial files;
5. report.html opens in headless Chromium without console errors, with charts,
   and a screenshot is written.
"""
import argparse
import html.parser
import json
import xml.etree.ElementTree as ET
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from common import Failures, cmake_on

ap = argparse.ArgumentParser()
ap.add_argument("--mrct", required=True)
ap.add_argument("--source", required=True)
ap.add_argument("--workdir", required=True)
ap.add_argument("--update", action="store_true")
ap.add_argument("--sanitized", default="OFF", help="ON: a sanitizer build (the plan runs of 2 and 3 take a subset)")
args = ap.parse_args()
sanitized = cmake_on(args.sanitized)
fails = Failures()
work = os.path.join(args.workdir, "report_check")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
plan = "testplans/metaroce-1.2/plan.yaml"
# Steps 2 and 3 run the plan twice (whole, then in 3 shards). Unoptimised and
# sanitized that is 40 s of CI's minutes; there they take three groups of
# cases (31 of 138, sweeps among them), and plan_reference_run writes the
# whole plan's reports in that build. The release build runs all of it.
scope = ["--filter", "CONN-*", "--filter", "GR-*", "--filter", "STR-*"] if sanitized else []
approved = os.path.join(args.source, "tests/reports/approved")


def mrct(*a, **kw):
    return subprocess.run([args.mrct, *a], capture_output=True, text=True, cwd=args.source, **kw)


def strip_json(path):
    j = json.load(open(path))
    j.pop("host", None)
    for c in j["cases"]:
        c.pop("wall_s", None)
    return j


def strip_junit(path):
    return re.sub(r' time="[0-9.]+"', ' time="0"', open(path).read())


class Text(html.parser.HTMLParser):
    """The text a reader sees (style and SVG geometry excluded; SVG labels kept)."""

    def __init__(self):
        super().__init__()
        self.lines = []
        self.in_style = False

    def handle_starttag(self, tag, attrs):
        self.in_style = self.in_style or tag == "style"

    def handle_endtag(self, tag):
        if tag == "style":
            self.in_style = False

    def handle_data(self, data):
        d = " ".join(data.split())
        if d and not self.in_style:
            self.lines.append(d)


def html_text(path):
    t = Text()
    t.feed(open(path).read())
    return re.sub(r"· host \S+ ·", "· host HOST ·", "\n".join(t.lines) + "\n")


def xmllint(path):
    return subprocess.run(["xmllint", "--noout", "--schema", os.path.join(args.source, "tests/reports/junit.xsd"), path],
                          capture_output=True, text=True)


# 1. approval
app = os.path.join(work, "approval")
r = mrct("run", "tests/reports/approval_plan.yaml", "--dut", "sim:bug=frozen-rnr", "--seed", "3", "--out", app)
if r.returncode != 1:
    fails.add(f"approval run: exit {r.returncode}, expected 1\n{r.stdout}\n{r.stderr}")
current = {
    "results.json": json.dumps(strip_json(os.path.join(app, "results.json")), indent=2) + "\n",
    "junit.xml": strip_junit(os.path.join(app, "junit.xml")),
    "report.txt": html_text(os.path.join(app, "report.html")),
}
verdicts = sorted(c["verdict"] for c in json.loads(current["results.json"])["cases"])
if verdicts != ["fail", "inconclusive", "pass", "skipped"]:
    fails.add(f"the approval plan no longer gives one case per verdict: {verdicts}")
for name, text in current.items():
    base = os.path.join(approved, name)
    if args.update:
        open(base, "w").write(text)
    elif not os.path.exists(base) or open(base).read() != text:
        open(os.path.join(work, "received." + name), "w").write(text)
        fails.add(f"{name} differs from tests/reports/approved/{name} (received: {work}/received.{name}; "
                  f"rerun with --update if the change is intended)")

# 2. JUnit against the XSD, with a negative control
full = os.path.join(work, "full")
r = mrct("run", plan, *scope, "--jobs", "2", "--out", full, "--failures-only")
if r.returncode != 0:
    fails.add(f"full plan run: exit {r.returncode}\n{r.stdout[-1500:]}")
for p in (os.path.join(app, "junit.xml"), os.path.join(full, "junit.xml")):
    v = xmllint(p)
    if v.returncode != 0:
        fails.add(f"{p} does not validate against junit.xsd:\n{v.stderr[-1500:]}")
broken = os.path.join(work, "broken.xml")
open(broken, "w").write(open(os.path.join(app, "junit.xml")).read().replace("<testcase classname=", "<testcase clazz=", 1))
if xmllint(broken).returncode == 0:
    fails.add("the XSD accepts a testcase without classname: the schema check cannot fail")

# 2b. results.json against its JSON Schema (docs/results.schema.json), with a negative control
import jsonschema
schema = json.load(open(os.path.join(args.source, "docs/results.schema.json")))
for p in (os.path.join(app, "results.json"), os.path.join(full, "results.json")):
    try:
        jsonschema.validate(json.load(open(p)), schema)
    except jsonschema.ValidationError as e:
        fails.add(f"{p} does not follow docs/results.schema.json: {e.message} at {list(e.absolute_path)}")
bad = json.load(open(os.path.join(app, "results.json")))
bad["cases"][0]["verdict"] = "passed"
try:
    jsonschema.validate(bad, schema)
    fails.add("the JSON schema accepts an unknown verdict: the schema check cannot fail")
except jsonschema.ValidationError:
    pass

# 3. shards merged == unsharded
shards = []
for k in (1, 2, 3):
    d = os.path.join(work, f"shard{k}")
    r = mrct("run", plan, *scope, "--jobs", "2", "--shard", f"{k}/3", "--out", d, "--failures-only")
    if r.returncode != 0:
        fails.add(f"shard {k}/3: exit {r.returncode}")
    shards.append(d)
sizes = [len(json.load(open(os.path.join(d, "results.json")))["cases"]) for d in shards]
merged = os.path.join(work, "merged")
r = mrct("report", "merge", *shards, "--out", merged)
if r.returncode != 0:
    fails.add(f"report merge: exit {r.returncode}\n{r.stderr}")
full_cases = len(json.load(open(os.path.join(full, "results.json")))["cases"])
if sum(sizes) != full_cases or min(sizes) == 0:
    fails.add(f"shard sizes {sizes} do not partition the {full_cases} cases")
if strip_json(os.path.join(merged, "results.json")) != strip_json(os.path.join(full, "results.json")):
    fails.add("merged results.json differs from the unsharded run's")
if strip_junit(os.path.join(merged, "junit.xml")) != strip_junit(os.path.join(full, "junit.xml")):
    fails.add("merged junit.xml differs from the unsharded run's")
if open(os.path.join(merged, "report.html")).read() != open(os.path.join(full, "report.html")).read():
    fails.add("merged report.html differs from the unsharded run's")
if mrct("report", "merge", shards[0], shards[0], "--out", os.path.join(work, "dup")).returncode == 0:
    fails.add("merging a shard with itself was accepted")

# 4. an interrupted run: SIGINT (a user), SIGTERM (a CI runner stopping the
#    job), SIGHUP (the terminal gone) all end it with exit 3 and valid
#    partial reports marked interrupted
for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    name = signal.Signals(sig).name
    inter = os.path.join(work, f"interrupted-{name}")
    p = subprocess.Popen([args.mrct, "run", plan, "--jobs", "1", "--repeat", "30", "--out", inter, "--failures-only"],
                         cwd=args.source, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    p.send_signal(sig)
    out, err = p.communicate(timeout=120)
    if p.returncode != 3:
        fails.add(f"run interrupted by {name}: exit {p.returncode}, expected 3\n{out[-800:]}{err[-800:]}")
    try:
        j = json.load(open(os.path.join(inter, "results.json")))
        if not j.get("interrupted") or not (0 < len(j["cases"]) < j["planned"]):
            fails.add(f"{name}: interrupted results: interrupted={j.get('interrupted')} cases={len(j['cases'])} "
                      f"planned={j['planned']}")
        if xmllint(os.path.join(inter, "junit.xml")).returncode != 0:
            fails.add(f"{name}: junit.xml does not validate")
        if not open(os.path.join(inter, "report.html")).read().rstrip().endswith("</html>"):
            fails.add(f"{name}: report.html is truncated")
    except Exception as e:
        fails.add(f"run interrupted by {name} left unreadable reports: {e}")
    leftovers = [f for f in os.listdir(inter) if f.endswith(".tmp")] if os.path.isdir(inter) else []
    if leftovers:
        fails.add(f"{name}: partial files left: {leftovers}")

# 4b. bytes that are not UTF-8 (a plan's strings here; an agent's reply takes
#     the same way into a case's reason): the reports are written, every
#     stray byte escaped as \xHH
raw = os.path.join(work, "not-utf8")
os.makedirs(raw, exist_ok=True)
raw_plan = os.path.join(raw, "plan.yaml")
with open(raw_plan, "wb") as f:
    f.write(b'suite:\n  name: "bad \xff\xfe name"\n  version: "1"\n  spec: metaroce-1.2-model\ncases:\n'
            b'  - id: U8-001\n    title: "t \xc3\x28 half a character"\n    clauses: [MR-HDR-1]\n'
            b'    setup:\n      - post_write: {size: 4096, count: 1}\n    expect:\n      - all_complete: {}\n')
r = mrct("run", raw_plan, "--out", os.path.join(raw, "out"))
if r.returncode != 0:
    fails.add(f"a plan with non-UTF-8 strings: exit {r.returncode}\n{r.stdout[-400:]}{r.stderr[-400:]}")
try:
    j = json.load(open(os.path.join(raw, "out", "results.json"), encoding="utf-8"))
    if j["plan"]["name"] != "bad \\xFF\\xFE name" or "\\xC3(" not in j["cases"][0]["title"]:
        fails.add(f"non-UTF-8 bytes not escaped: {j['plan']['name']!r} {j['cases'][0]['title']!r}")
    if xmllint(os.path.join(raw, "out", "junit.xml")).returncode != 0:
        fails.add("non-UTF-8 plan: junit.xml does not validate")
    open(os.path.join(raw, "out", "report.html"), encoding="utf-8").read()
except Exception as e:
    fails.add(f"non-UTF-8 plan: reports unreadable: {e}")

# 4c. long names full of XML's special characters (issue 23: JUnit was once
#     written through a 512-byte buffer): junit.xml validates and carries the
#     plan's name, a case's title and a reason back whole
longdir = os.path.join(work, "long-names")
os.makedirs(longdir, exist_ok=True)
long_name = "suite <&\"'> " + "x" * 3000 + " end"
long_title = "title ]]> <![CDATA[ & " + "y" * 3000
with open(os.path.join(longdir, "plan.yaml"), "w") as f:
    f.write("suite:\n  name: " + json.dumps(long_name) + "\n  version: \"1\"\n  spec: metaroce-1.2-model\ncases:\n"
            "  - id: LONG-001\n    title: " + json.dumps(long_title) + "\n    clauses: [MR-HDR-1]\n"
            "    setup:\n      - post_write: {size: 4096, count: 1}\n    expect:\n      - all_complete: {}\n"
            "  - id: LONG-002\n    title: " + json.dumps(long_title) + "\n    clauses: [MR-HDR-1]\n"
            "    setup:\n      - post_write: {size: 4096, count: 1}\n    expect:\n"
            "      - frame_count: {at_least: 1000000}\n")
r = mrct("run", os.path.join(longdir, "plan.yaml"), "--out", os.path.join(longdir, "out"))
try:
    jx = os.path.join(longdir, "out", "junit.xml")
    if xmllint(jx).returncode != 0:
        fails.add("long names: junit.xml does not validate")
    root = ET.parse(jx).getroot()
    names = [root.get("name")] + [e.get("name") for e in root.iter("testsuite")]
    if long_name not in names:
        fails.add(f"long names: the plan's name is not carried whole in junit.xml: {[n[:40] if n else n for n in names]}")
    cases = {e.get("name", ""): e for e in root.iter("testcase")}
    if not any(long_title in n for n in cases):
        fails.add("long names: a case's title is not carried whole in junit.xml")
    failed = [e for e in root.iter("failure")]
    if r.returncode != 1 or len(failed) != 1 or ">= 1000000" not in (failed[0].get("message") or "") + (failed[0].text or ""):
        fails.add(f"long names: expected exit 1 and LONG-002's failure with its reason in junit.xml; exit {r.returncode}, "
                  f"{len(failed)} failure element(s)")
except Exception as e:
    fails.add(f"long names: junit.xml unreadable: {e}")

# 5. headless Chromium
chromium = shutil.which("chromium")
if not chromium:
    fails.add("chromium is not installed (scripts/setup.sh installs it)")
else:
    page = "file://" + os.path.abspath(os.path.join(app, "report.html"))
    shot = os.path.join(work, "report.png")
    base = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
            f"--user-data-dir={os.path.join(work, 'chromium-profile')}"]
    r = subprocess.run(base + ["--enable-logging=stderr", "--v=0", "--window-size=1280,2000", f"--screenshot={shot}", page],
                       capture_output=True, text=True, timeout=120)
    console = [line for line in r.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    if console:
        fails.add("console messages while loading the report:\n" + "\n".join(console[:10]))
    if not os.path.exists(shot) or os.path.getsize(shot) < 10000:
        fails.add("no screenshot was produced")
    dom = subprocess.run(base + ["--dump-dom", page], capture_output=True, text=True, timeout=120).stdout
    if dom.count("<svg") < 3 or "Clause traceability" not in dom or "APP-FAIL" not in dom:
        fails.add(f"the rendered report lacks charts or sections (svg: {dom.count('<svg')})")
    print(f"screenshot: {shot}")

fails.finish("reports: approval, JUnit schema, sharding, interruption, Chromium")
