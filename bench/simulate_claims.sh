#!/usr/bin/env bash
# Reproduces the public MetaRoCE claims with the reference endpoint in virtual
# time and measures the simulator's event rate. Run on demand (not in CI):
#   cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release -DMRCT_TESTS=OFF && cmake --build build-rel
#   bench/simulate_claims.sh [build-rel/mrct]
# Prints markdown tables; copy them into docs/performance.md with the date.
set -euo pipefail
M=${1:-build-rel/mrct}
PY=/usr/bin/python3
row() {  # row LABEL ARGS...: one table row from `mrct simulate` JSON
  local label=$1
  shift
  "$M" simulate "$@" 2>/dev/null | "$PY" -c "
import json, sys
j = json.load(sys.stdin)
p = j['sender0_paths']
print(f\"| $label | {j['goodput_gbps']:.1f} | {j['completed']}/{j['expected']} | {j['retransmissions']['fast']} | {j['retransmissions']['rto']} | {p[0]['rto_us']:.0f} | {j['virtual_time_us']:.0f} |\")"
}
header() { echo; echo "$1"; echo; echo "| run | goodput Gb/s | completed | fast retx | RTO retx | path-0 RTO us | virtual us |"; echo "|---|---|---|---|---|---|---|"; }

common=(--messages 64 --inbound-gbps 800)
header "Goodput vs random loss (8 paths x 100 Gb/s, 64 x 1 MiB WRITEs, loss on every path, sender to receiver)"
for l in 0 0.001 0.01 0.02 0.05 0.1; do row "loss $l" "${common[@]}" --loss "$l"; done

header "Planes: goodput vs paths (each path 100 Gb/s and the bottleneck; grant 1.6 Tb/s)"
for p in 4 8; do row "$p paths" --messages 64 --inbound-gbps 1600 --paths "$p"; done

header "Path 3 fails (blackhole) at 100 us"
row "reference, no failure" "${common[@]}"
row "reference, path 3 fails" "${common[@]}" --fail-path 3:100us

header "One slow path (path 1 +200 us one way) at 1 % loss: per-path RTO vs shared RTO"
row "reference, open loop" "${common[@]}" --loss 0.01 --path-delay 1:200us
row "shared-rto, open loop" "${common[@]}" --loss 0.01 --path-delay 1:200us --bug-sender shared-rto
closed=(--size 262144 --messages 256 --outstanding 2 --inbound-gbps 800 --loss 0.01 --path-delay 1:200us)
row "reference, closed loop (2 x 256 KiB outstanding)" "${closed[@]}"
row "shared-rto, closed loop (2 x 256 KiB outstanding)" "${closed[@]}" --bug-sender shared-rto

header "Incast: N senders through the receiver's shared 400 Gb/s link (RED ECN), grant 400 Gb/s, 8 x 1 MiB each"
for n in 1 4 16 64; do row "$n senders" --senders "$n" --messages 8 --receiver-link 400Gbps --inbound-gbps 400; done

# Event rate. Wall time on a shared 2-core VM varies by about 10 % from run to
# run, so each row is 5 runs: the median and the best.
rate() {  # rate LABEL ARGS...
  local label=$1
  shift
  for _ in 1 2 3 4 5; do "$M" simulate "$@" 2>/dev/null; echo; done | "$PY" -c "
import json, statistics, sys
runs = [json.loads(l) for l in sys.stdin if l.strip()]
ev = sorted(r['events_per_s'] for r in runs)
fr = sorted(r['frames_per_s'] for r in runs)
j = runs[0]
print(f\"| $label | {j['events']} | {j['frames']} | {statistics.median(ev)/1e6:.2f} M / {ev[-1]/1e6:.2f} M | {statistics.median(fr)/1e6:.3f} M / {fr[-1]/1e6:.3f} M |\")"
}
echo
echo "Event rate: 64 senders x 8 paths incast, 256 KiB WRITEs (5 runs: median / best)"
echo
echo "| run | events | frames | events/s | frames/s |"
echo "|---|---|---|---|---|"
rate "16 messages each, MTU 4096" --senders 64 --paths 8 --messages 16 --size 262144
rate "64 messages each, MTU 4096" --senders 64 --paths 8 --messages 64 --size 262144
rate "16 messages each, MTU 256 (payload work ~0)" --senders 64 --paths 8 --messages 16 --size 262144 --mtu 256
