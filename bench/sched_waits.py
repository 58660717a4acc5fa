#!/usr/bin/python3
"""What mrct-refnic's thread was doing while frames waited for it.

Reads a run's perf record of mrct-refnic's scheduler switches and wakeups
(bench/case_on_wire.py --perf: WORKDIR/i.perf, with i.perf.clock) and its log
(WORKDIR/i.refnic.log), and for each logged run of frames that waited in the
host ("wire: frames waited up to ...", docs/cli.md: from the first frame's
arrival, as long as the longest wait) at least --min ms, or each agent call
that took that long, prints how the span divided between running,
waiting on a run queue (runnable, not run: what the engine's pid= probe
reads), sleeping, and sleeping uninterruptibly (state D: a lock, a page), and
who woke it from the longest sleep. On demand, as root; not in CI.

    sudo /usr/bin/python3 bench/sched_waits.py /tmp/mrct-case-on-wire/3 [--min 1.5]
"""
import argparse
import bisect
import collections
import re
import subprocess
import sys

SWITCH = re.compile(r"prev_comm=(\S+) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=(\S+) next_pid=(\d+)")
WAKE = re.compile(r"comm=(\S+) pid=(\d+)")


def day_seconds(hms):
    h, m, s = hms.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def load(perf_file, offset):
    """(wall seconds-of-day, kind, state, waker) events of mrct-refnic's busiest thread."""
    out = subprocess.run(["perf", "script", "-i", perf_file, "-F", "comm,tid,time,event,trace"],
                         capture_output=True, text=True).stdout
    per_tid = collections.defaultdict(list)
    for line in out.splitlines():
        try:
            head, trace = line.split(": ", 1)[0], line.split(": ", 1)[1]
            comm_tid_time = head.split()
            t = float(comm_tid_time[-1])
        except (IndexError, ValueError):
            continue
        wall = (t + offset) % 86400
        if "sched_switch" in line:
            m = SWITCH.search(line)
            if not m:
                continue
            if m.group(1) == "mrct-refnic":
                per_tid[int(m.group(2))].append((wall, "out", m.group(3), m.group(4)))
            if m.group(4) == "mrct-refnic":
                per_tid[int(m.group(5))].append((wall, "in", None, m.group(1)))
        elif "sched_wakeup" in line:
            m = WAKE.search(trace)
            if m and m.group(1) == "mrct-refnic":
                per_tid[int(m.group(2))].append((wall, "wake", None, comm_tid_time[0]))
    if not per_tid:
        return []
    return sorted(max(per_tid.values(), key=len))


def states(events):
    """[(from, to, state, woken_by)] from the thread's switches and wakeups."""
    spans, cur = [], None  # cur: (since, state)
    for t, kind, st, who in events:
        if kind == "in":
            if cur:
                spans.append((cur[0], t, cur[1], None))
            cur = (t, "run")
        elif kind == "out":
            if cur:
                spans.append((cur[0], t, cur[1], None))
            state = "wait" if st.startswith("R") else "sleep" if st.startswith("S") else "D" if st.startswith("D") else st
            cur = (t, state)
        elif cur and cur[1] in ("sleep", "D"):  # a wakeup ends a sleep: runnable from here
            spans.append((cur[0], t, cur[1], who))
            cur = (t, "wait")
    return spans


def summary(spans, starts, a, b):
    total = collections.Counter()
    longest_sleep = (0.0, None)
    i = max(0, bisect.bisect_right(starts, a) - 1)
    while i < len(spans) and spans[i][0] < b:
        t0, t1, st, who = spans[i]
        d = max(0.0, min(b, t1) - max(a, t0))
        total[st] += d * 1e3
        if st in ("sleep", "D") and d * 1e3 > longest_sleep[0]:
            longest_sleep = (d * 1e3, f"{st}, woken by {who}" if who else st)
        i += 1
    parts = ", ".join(f"{k} {v:.3f} ms" for k, v in sorted(total.items(), key=lambda x: -x[1]))
    if longest_sleep[1] and longest_sleep[0] >= 0.1:
        parts += f"; longest sleep {longest_sleep[0]:.3f} ms ({longest_sleep[1]})"
    return parts or "no events in the span (the record did not cover it)"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="WORKDIR/i: the run's prefix (i.perf, i.perf.clock, i.refnic.log beside it)")
    ap.add_argument("--min", type=float, default=1.0, help="the shortest wait or agent call shown, ms (default 1)")
    a = ap.parse_args()
    try:
        offset = float(open(a.run + ".perf.clock").read())
        log = open(a.run + ".refnic.log").read().splitlines()
    except OSError as e:
        print(f"sched_waits: {e}", file=sys.stderr)
        return 2
    spans = states(load(a.run + ".perf", offset))
    if not spans:
        print("sched_waits: no switches of mrct-refnic in the record", file=sys.stderr)
        return 1
    starts = [s[0] for s in spans]
    wait_re = re.compile(r"^\[(\S+)\].*up to ([\d.]+) ms.*\((\d+) frames, the first arrived at (\S+) UTC\); "
                         r"the thread ran ([\d.]+) ms of the ([\d.]+) ms")
    call_re = re.compile(r"^\[(\S+)\] \[info\] agent (\S+) took ([\d.]+) ms")
    shown = 0
    for line in log:
        m = wait_re.search(line)
        if m and float(m.group(2)) >= a.min:
            # The line is written when a prompt frame ends the run, maybe much
            # later: the span is the first frame's arrival to the longest
            # wait's end (the first frame's, as a rule).
            first = day_seconds(m.group(4))
            print(f"{m.group(4)} frames waited {m.group(2)} ms ({m.group(3)}): " +
                  summary(spans, starts, first, first + float(m.group(2)) / 1e3))
            shown += 1
            continue
        m = call_re.search(line)
        if m and float(m.group(3)) >= a.min:
            end = day_seconds(m.group(1))
            print(f"{m.group(1)} agent {m.group(2)} took {m.group(3)} ms: " +
                  summary(spans, starts, end - float(m.group(3)) / 1e3, end))
            shown += 1
    print(f"{shown} spans of at least {a.min} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
