#!/usr/bin/python3
"""Misbehaving agents and dying agents (issue 22 items 3, 4, 5; docs/adapters.md
"When the agent misbehaves"). mrct-refnic on loopback, tests/tools/fault_agent.py
in front of it, the engine over agent+udp, one case (CONN-001) at a time:

1. each fault of the proxy at an operation of the case (the connection
   closed, bytes that are not JSON nor UTF-8, another request's id, a reply
   to a request never made, a line beyond the 32 MiB limit, no answer, the
   agent process exiting): the case is `error`, its reason names that first
   cause, the run writes its reports and exits 3, within a bound;
2. the agent killed between cases and started again 0.7 s later: the cases
   after it reconnect (bounded backoff) and none is an error;
3. the agent gone for good: after 5 consecutive errors (--max-errors) the
   run stops, exit 3, results.json says why (`stopped`) and holds 5 cases;
4. mrct-refnic's bounds: a wire peer outside --peers is refused (the case's
   reason says so); bad --peers/--max-mr/--max-memory exit 2.
Needs no root (loopback only)."""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import check_setup  # noqa: E402

args, work, fails = check_setup("agent_faults", "refnic")
base = 20000 + os.getpid() % 20000
AGENT, PROXY = base, base + 1
WIRE = f"127.0.0.{os.getpid() % 200 + 20}"  # the DUT's wire address (loopback; the engine's is 127.0.0.1, in --peers subnet)
proxy_py = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fault_agent.py")


def listening(p, port, what):
    """Waits (up to 10 s) until `port` on loopback has a listener, without
    connecting to it (a connection would be the proxy's one to fault): a
    fixed pause was a race on a loaded host."""
    deadline = time.time() + 10
    while time.time() < deadline:
        if f"127.0.0.1:{port} " in subprocess.run(["ss", "-Hltn"], capture_output=True, text=True).stdout:
            return p
        if p.poll() is not None:
            fails.add(f"{what} exited with {p.returncode} before listening on {port}")
            return p
        time.sleep(0.02)
    fails.add(f"{what} did not listen on {port} within 10 s")
    return p


def refnic(*extra):
    p = subprocess.Popen([args.refnic, "--addr", WIRE, "--listen", f"127.0.0.1:{AGENT}", *extra],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return listening(p, AGENT, "mrct-refnic")


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def run(out, port, *extra, timeout="500ms"):
    dut = f"agent+udp:agent=127.0.0.1:{port},dut={WIRE},local=127.0.0.1,timeout={timeout},reconnect=500ms,host=separate"
    t0 = time.time()
    r = subprocess.run([args.mrct, "-q", "run", args.plan, "--filter", "CONN-001", "--dut", dut, "--out", out, *extra],
                       capture_output=True, text=True, timeout=300)
    path = os.path.join(out, "results.json")
    res = json.load(open(path, encoding="utf-8")) if os.path.exists(path) else None
    return r, res, time.time() - t0


# 1. faults, each at an operation the case makes; the reason expected.
FAULTS = [
    ("connect", "close", "agent connect: the agent closed the connection"),
    ("connect", "garbage", "agent connect: the response is not a JSON object: \\xFF\\xFE<html>"),
    ("status", "wrong-id", "a reply to a request never made"),
    ("accepted", "unasked", "a reply to a request never made"),
    ("poll", "garbage", "agent poll: the response is not a JSON object: \\xFF\\xFE<html>"),  # the data phase
    ("poll", "longline", "exceeds the line limit of 33554432 bytes"),  # 32 MiB to read: timeout 5s (sanitizers)
    ("poll", "hang", "agent poll: no response within 500 ms"),
    ("register_mr", "exit", "agent register_mr: the agent closed the connection"),
    ("poll", "bad-err", "agent poll: malformed response: a completion's time_err_ns is not an unsigned integer: -5"),
]
nic = refnic()
try:
    for op, fault, why in FAULTS:
        name = f"{op}-{fault}"
        px = subprocess.Popen([sys.executable, proxy_py, "--listen", f"127.0.0.1:{PROXY}", "--upstream", f"127.0.0.1:{AGENT}",
                               "--op", op, "--fault", fault], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        listening(px, PROXY, f"the fault proxy ({op} {fault})")
        try:
            r, res, secs = run(os.path.join(work, name), PROXY, timeout="5s" if fault == "longline" else "500ms")
        finally:
            stop(px)
        if r.returncode != 3 or not res:
            fails.add(f"{name}: exit {r.returncode}, results {'written' if res else 'missing'}\n{r.stdout[-300:]}{r.stderr[-300:]}")
            continue
        c = res["cases"][0]
        if c["verdict"] != "error" or why not in c["reason"]:
            fails.add(f"{name}: {c['verdict']}: {c['reason'][:300]!r} does not name '{why}'")
        if secs > 20:
            fails.add(f"{name}: took {secs:.1f} s")
finally:
    stop(nic)

# 2. the agent restarted between cases: the run recovers.
nic = refnic()
out = os.path.join(work, "restart")
dut = f"agent+udp:agent=127.0.0.1:{AGENT},dut={WIRE},local=127.0.0.1,timeout=500ms,reconnect=3s,host=separate"
p = subprocess.Popen([args.mrct, "-q", "run", args.plan, "--filter", "CONN-001", "--repeat", "40", "--dut", dut, "--out", out],
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
time.sleep(1.0)
nic.kill()
nic.wait()
killed_at = time.time()
time.sleep(0.7)
nic = refnic()
try:
    outp = p.communicate(timeout=300)[0]
finally:
    stop(nic)
res = json.load(open(os.path.join(out, "results.json")))
v = [c["verdict"] for c in res["cases"]]
errors = v.count("error")
# Recovery is the point: no case after the one the kill cut is an `error`
# (under a sanitizer's slowdown a real-time verdict may be other than pass).
if len(v) != 40 or errors > 1 or v[-1] == "error" or "stopped" in res:
    fails.add(f"agent restarted: {len(v)} cases, verdicts {v}\n{outp[-600:]}")
else:
    print(f"agent restarted: 40 cases, {errors} error(s) (a case the kill cut), then {v.count('pass')} passes in all")

# 3. the agent gone for good: the run stops after 5 consecutive errors.
r, res, secs = run(os.path.join(work, "gone"), AGENT, "--repeat", "50")
v = [c["verdict"] for c in res["cases"]] if res else []
if r.returncode != 3 or v != ["error"] * 5 or "consecutive errors" not in (res or {}).get("stopped", ""):
    fails.add(f"agent gone: exit {r.returncode}, verdicts {v}, stopped {(res or {}).get('stopped')!r}")
elif "cannot reach the agent" not in res["cases"][0]["reason"] or "tries over 500 ms" not in res["cases"][0]["reason"]:
    fails.add(f"agent gone: reason {res['cases'][0]['reason']!r}")

# 4. the agent's own bounds (item 7): wire peers outside --peers are refused
#    (the case says so), and bad bounds are refused at start.
nic = refnic("--peers", "10.9.9.0/24")
try:
    r, res, _ = run(os.path.join(work, "peers"), AGENT)
    c = res["cases"][0] if res else {"verdict": "none", "reason": r.stdout[-300:]}
    if c["verdict"] != "error" or "not a wire peer this agent may send to (--peers 10.9.9.0/24)" not in c["reason"]:
        fails.add(f"--peers: {c['verdict']}: {c['reason'][:300]!r}")
finally:
    stop(nic)
for bad in (["--peers", "10.0.0.0/33"], ["--peers", "nowhere"], ["--max-mr", "2GiB", "--max-memory", "1GiB"]):
    r = subprocess.run([args.refnic, "--addr", WIRE, "--listen", f"127.0.0.1:{AGENT}", *bad], capture_output=True, text=True,
                       timeout=10)
    if r.returncode != 2:
        fails.add(f"mrct-refnic {' '.join(bad)}: exit {r.returncode}, expected 2 ({r.stderr.strip()[-200:]})")

fails.finish(f"misbehaving agents: {len(FAULTS)} faults, a restart, an agent gone, the agent's bounds")
