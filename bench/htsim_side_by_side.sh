#!/usr/bin/env bash
# bench/htsim_side_by_side.sh: `mrct simulate` beside htsim on the same
# workloads (issue 21), interleaved in one sitting; on demand, not in CI.
#
#   HTSIM_DIR=/path/to/csg-htsim/sim [RUNS=3] [BUILD=build] [WORKLOADS="incast64 one_sender incast256 incast1024"] \
#     [PAYLOAD=symbolic|real] bench/htsim_side_by_side.sh
#
# PAYLOAD (default symbolic) is mrct's --payload: htsim carries no bytes, so
# the like-for-like run describes payloads instead of carrying them (same
# metrics, docs/simulate.md "Payload"); PAYLOAD=real measures real bytes.
#
# HTSIM_DIR is htsim's sim/ folder (github.com/Broadcom/csg-htsim, BSD-2);
# the script builds libhtsim.a and datacenter/htsim_roce and htsim_eqds with
# htsim's own Makefiles if they are missing. For each workload and each of
# RUNS rounds it runs mrct, htsim_roce and htsim_eqds one after the other
# (interleaved: a slow moment of the host hits all three alike), each under
# /usr/bin/time, and prints per simulator the median CPU seconds (user +
# system), the peak RSS, the data packets per CPU-second (the workload's bytes
# / 4096, the same count for all three) and whether every message or flow
# completed; then mrct's ratio to the faster htsim (above 1: mrct is faster).
#
# Workloads (mrct's model is not htsim's; docs/performance.md says how):
#   incast64    64 senders x 8 x 1 MiB into one receiver, 400 Gb/s receiver
#               link, 8 paths per sender (mrct --receiver-link 400Gbps
#               --inbound-gbps 400); htsim: 64 flows of 8 MiB into node 0 of
#               a 2-tier fat tree with 400 Gb/s host links (ecmp_host: each
#               packet's entropy picks its path among 8)
#   one_sender  1 sender, 8 paths, 1024 x 1 MiB (--inbound-gbps 800); htsim:
#               one 1 GiB flow on 800 Gb/s host links, htsim_eqds -paths 8
#   incast256, incast1024   as incast64 with 256 and 1024 senders
set -uo pipefail
cd "$(dirname "$0")/.."
: "${HTSIM_DIR:?HTSIM_DIR=path to csg-htsim/sim (see the top of this script)}"
runs=${RUNS:-3}
build=${BUILD:-build}
workloads=${WORKLOADS:-incast64 one_sender incast256 incast1024}
payload=${PAYLOAD:-symbolic}
case "$payload" in real|symbolic) ;; *) echo "PAYLOAD: real or symbolic" >&2; exit 2 ;; esac
[ -x "$build/mrct" ] || { echo "no $build/mrct: build first (scripts/build.sh $build)" >&2; exit 2; }
if [ ! -x "$HTSIM_DIR/datacenter/htsim_roce" ] || [ ! -x "$HTSIM_DIR/datacenter/htsim_eqds" ]; then
  echo "building htsim in $HTSIM_DIR (its own Makefiles)" >&2
  make -C "$HTSIM_DIR" -j"$(nproc)" libhtsim.a >/dev/null || exit 2
  make -C "$HTSIM_DIR/datacenter" -j"$(nproc)" htsim_roce htsim_eqds >/dev/null || exit 2
fi
exec /usr/bin/python3 - "$build/mrct" "$HTSIM_DIR/datacenter" "$runs" "$payload" $workloads <<'PY'
import json, os, re, statistics, subprocess, sys, tempfile, time

mrct, hdir, runs, payload, names = (os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), int(sys.argv[3]), sys.argv[4],
                                    sys.argv[5:])
MIB = 1 << 20
MTU = 4096

# name: (senders, messages per sender, receiver link Gb/s or None, inbound Gb/s, htsim host link Gb/s)
WORKLOADS = {
    "incast64": (64, 8, 400, 400, 400),
    "one_sender": (1, 1024, None, 800, 800),
    "incast256": (256, 8, 400, 400, 400),
    "incast1024": (1024, 8, 400, 400, 400),
}
for n in names:
    if n not in WORKLOADS:
        sys.exit(f"unknown workload {n}: one of {' '.join(WORKLOADS)}")

work = tempfile.mkdtemp(prefix="mrct-htsim-")


def timed(cmd, out):
    """Runs cmd, stdout to `out`, stderr beside it; (cpu seconds, peak RSS MB, wall s)."""
    t = os.path.join(work, "time")
    with open(out, "w") as f, open(out + ".err", "w") as e:
        t0 = time.monotonic()
        # In the work folder: htsim writes logout.dat and idmap.txt where it runs.
        r = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", t] + cmd, stdout=f, stderr=e, cwd=work)
        wall = time.monotonic() - t0
    u, s, m = open(t).read().split()[-3:]
    if r.returncode != 0:
        print(f"  ! {' '.join(cmd[:2])} exited {r.returncode} (see {out})", flush=True)
    return float(u) + float(s), int(m) / 1024.0, wall


def tm_file(name, senders, msgs, nodes):
    """htsim's connection matrix: every sender one flow of all its messages into node 0."""
    path = os.path.join(work, name + ".cm")
    with open(path, "w") as f:
        f.write(f"Nodes {nodes}\nConnections {senders}\n")
        for i in range(1, senders + 1):
            f.write(f"{i}->0 start 0 size {msgs * MIB} id {i}\n")
    return path


def htsim_done(out):
    """(flows finished, the last finish in us) from htsim's output."""
    text = open(out).read() + open(out + ".err").read()
    times = [float(m.group(1)) for m in re.finditer(r"finished at ([0-9.e+]+)", text)]
    return len(times), max(times) if times else 0.0


rows = []
for name in names:
    senders, msgs, link, inbound, host = WORKLOADS[name]
    packets = senders * msgs * MIB // MTU
    # htsim runs until its end time whatever finished: long enough for the
    # whole workload at a third of the bottleneck's rate, plus 10 ms.
    bottleneck = (link or inbound) * 1e9
    end_us = int(senders * msgs * MIB * 8 / bottleneck * 3e6) + 10_000
    mcmd = [mrct, "simulate", "--senders", str(senders), "--messages", str(msgs), "--inbound-gbps", str(inbound),
            "--payload", payload]
    if link:
        mcmd += ["--receiver-link", f"{link}Gbps"]
    # A 2-tier fat tree holds K*K/2 hosts exactly: the smallest that fits,
    # K even (K/2 spines; htsim ran 256 senders on K = 23 into a crash).
    k = 2
    while k * k // 2 < senders + 1:
        k += 2
    cm = tm_file(name, senders, msgs, k * k // 2)
    common = ["-tm", cm, "-nodes", str(k * k // 2), "-tiers", "2", "-strat", "ecmp_host", "-linkspeed", str(host * 1000), "-mtu", str(MTU),
              "-end", str(end_us)]
    sims = {
        "mrct": mcmd,
        "htsim_roce": [os.path.join(hdir, "htsim_roce"), "-q", "1000", "-paths", "8"] + common,
        "htsim_eqds": [os.path.join(hdir, "htsim_eqds"), "-paths", "8"] + common,
    }
    got = {k: [] for k in sims}
    for r in range(runs):
        for sim, cmd in sims.items():
            out = os.path.join(work, f"{name}-{sim}-{r}.out")
            cpu, rss, wall = timed(cmd, out)
            if sim == "mrct":
                try:
                    j = json.load(open(out))
                    # The last completion (virtual_time_us is where the run's
                    # 100 us polling steps stopped).
                    done, of, vt = j["completed"], j["expected"], j["completion_us"]["max"]
                except Exception as e:
                    done, of, vt = 0, senders * msgs, 0.0
                    print(f"  ! mrct output unreadable: {e}", flush=True)
            else:
                done, vt = htsim_done(out)
                of = senders
            got[sim].append((cpu, rss, done, of, vt))
            print(f"{name:11s} round {r + 1}: {sim:10s} {cpu:8.2f} CPU s {rss:8.1f} MB  {done}/{of} done, "
                  f"last at {vt / 1000:.2f} ms", flush=True)
    med = {}
    for sim, xs in got.items():
        cpu = statistics.median(x[0] for x in xs)
        med[sim] = cpu
        rows.append((name, sim, cpu, max(x[1] for x in xs), packets / cpu if cpu > 0 else 0.0,
                     min(x[2] for x in xs), xs[0][3], statistics.median(x[4] for x in xs)))
    # Only a transport that completed the workload in every round counts.
    done_all = [sim for sim in ("htsim_roce", "htsim_eqds") if all(x[2] == x[3] for x in got[sim])]
    if not all(x[2] == x[3] for x in got["mrct"]) or not done_all:
        rows.append((name, "ratio", 0.0, None, None, None, None, None))
    else:
        faster = min(med[sim] for sim in done_all)
        rows.append((name, "ratio", med["mrct"], None, faster / med["mrct"] if med["mrct"] > 0 else 0.0, None, None, None))

print(f"\n{runs} interleaved rounds; medians; mrct --payload {payload}. Packets: the workload's bytes / {MTU}.")
print(f"{'workload':11s} {'simulator':10s} {'CPU s':>8s} {'peak MB':>8s} {'pkts/CPU-s':>12s}  completed  last (ms)")
for name, sim, cpu, rss, pps, done, of, vt in rows:
    if sim == "ratio":
        print(f"{name:11s} {'mrct / faster htsim, packets per CPU-second':45s} " +
              (f"{pps:.2f}x" if pps is not None else "n/a: a side did not complete every round"))
    else:
        print(f"{name:11s} {sim:10s} {cpu:8.2f} {rss:8.1f} {pps:12.0f}  {done}/{of}  {vt / 1000:9.2f}")
print(f"(outputs in {work})")
PY
