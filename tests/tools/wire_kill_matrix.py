"""The kill matrix on a real wire (issue 19): every built-in bug profile in
mrct-refnic, driven over agent+udp on a veth between two network namespaces.
A profile that breaks a clause only real L2/L3 headers show (MR-HDR-6's DF
and Identification, MR-CC-5's PAUSE frames: the `wire_headers` capability)
runs over agent+pcap instead, mrct-refnic sending the frames its sockets
cannot through --raw-iface.

For each profile the cases citing a clause it breaks run against
mrct-refnic --bug PROFILE; the profile is caught when one of them fails. A
profile whose cases came out inconclusive (a host stall the engine measured)
and none failed is run again, up to RETRIES (2) more times, and says so.
Cases the wire cannot run are skipped with their reason (a capability), and
counted. The output is a table, one row per profile, and
wire-kill-matrix.json in --workdir; docs/testplan.md shows the result beside
the simulated matrix.

    /usr/bin/python3 tests/tools/wire_kill_matrix.py --mrct build/mrct \\
        --refnic build/mrct-refnic --plan testplans/metaroce-1.2/plan.yaml --workdir /tmp/wkm

On demand, `--dut-cpu 5` holds each mrct-refnic to 5 % of a CPU (a broken
DUT too slow for its wire, D111): a profile none of whose cases failed is
then reported `inconclusive` where some were, and only otherwise escaped.
`--tx packet` has both ends of agent+udp send through packet sockets (D134).
`--engine-cpu 20` holds the engine's process to 20 % of a CPU instead (a
host too slow for the engine, D136), reported the same way.
`--bump FABRIC.yaml` puts `mrct emulate` between the engine and the DUT with
those stages (a lab that loses, copies or reorders frames: D148-D152), one
emulator for the whole matrix, reported the same way: where the lab leaves a
profile's cases inconclusive, the engine could not tell, not an escape.

Exit status: 0 when every profile is caught, or when the only profiles that
escape are listed in --known-escapes (each must still escape: a profile that
is caught again is reported so the list shrinks); 1 otherwise; 77 without
root (ctest: skipped).
"""
import argparse
import json
import os
import subprocess
import sys

from wire_lab import Bump, CpuQuota, Netns, Refnic, agent_args, dut_spec, lab_args, lab_workdir, run_mrct, with_pid

# Clauses only a raw port sees: their profiles run over agent+pcap.
RAW_CLAUSES = {"MR-HDR-6", "MR-CC-5"}

# Runs of a profile beyond the first when it was not caught only because its
# cases were inconclusive (a host stall the engine measured).
RETRIES = 2


def profiles(args):
    """Bug profiles and the clauses each breaks: the table `mrct docs bugs` prints
    (docs/bug-profiles.md), rows "| `name` | MR-X-1, MR-Y-2 | behaviour |"."""
    out = subprocess.run([args.mrct, "docs", "bugs"], capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("`") and cells[1].startswith("MR-"):
            rows[cells[0].strip("`")] = [c.strip() for c in cells[1].split(",")]
    if not rows:
        raise RuntimeError("`mrct docs bugs` listed no bug profile")
    return rows


def transport(clauses):
    return "pcap" if RAW_CLAUSES & set(clauses) else "udp"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    lab_args(ap)
    ap.add_argument("--only", default="", help="comma-separated profiles (default: all)")
    ap.add_argument("--known-escapes", default="", help="comma-separated profiles expected to escape on the wire")
    ap.add_argument("--pid", action=argparse.BooleanOptionalAction, default=True,
                    help="name mrct-refnic's process in the DUT spec (pid=), so its own CPU waits are read; "
                         "--no-pid: as a user who does not (the host's CPU pressure is read instead, D95)")
    ap.add_argument("--dut-cpu", type=float, default=None,
                    help="hold mrct-refnic to this percentage of one CPU (a cgroup CPU quota per 100 ms): broken DUTs "
                         "too slow for their wire; a profile none of whose cases failed is reported as inconclusive "
                         "where some were, and as escaped only where none were (on demand, not in CI)")
    ap.add_argument("--engine-cpu", type=float, default=None,
                    help="hold the engine (mrct run) to this percentage of one CPU (a cgroup CPU quota per 100 ms): "
                         "a host too slow for the engine (D136); reported as with --dut-cpu (on demand, not in CI)")
    ap.add_argument("--tx", choices=("udp", "packet"), default="udp",
                    help="how both ends send over agent+udp: UDP sockets, or packet sockets (agent+udp tx=packet, "
                         "mrct-refnic --packet-tx; D134); agent+pcap is unchanged")
    agent_args(ap)  # each broken DUT behind such an agent
    ap.add_argument("--bump", default=None, metavar="FABRIC.yaml",
                    help="mrct emulate between the engine and the DUT with these stages (a lossy, duplicating or "
                         "reordering lab); reported as with --dut-cpu (on demand, not in CI)")
    args = ap.parse_args()
    work = lab_workdir(args, "wire-kill-matrix")
    if work is None:
        return 77
    bugs = profiles(args)
    if args.only:
        bugs = {k: v for k, v in bugs.items() if k in args.only.split(",")}
    known = set(filter(None, args.known_escapes.split(",")))
    rows = {}
    with Netns(bump=bool(args.bump)) as ns, \
            Bump(ns, args.mrct, args.bump, os.path.join(work, "bump.log"), os.path.join(work, "bump")):
        def run(bug, clauses, name):
            wire = transport(clauses)
            packet = wire == "udp" and args.tx == "packet"
            nic = Refnic(args, ns, bug, log=os.path.join(work, f"{name}.refnic.log"), raw=wire == "pcap", packet_tx=packet,
                         agent_as=args.agent_as, reap_stamps=args.reap_stamps)
            quota = CpuQuota(nic.p.pid, args.dut_cpu) if args.dut_cpu else None
            try:
                extra = [x for c in clauses for x in ("--clause", c)]
                spec = dut_spec(wire, ns, tx_packet=packet, direct=not args.bump)
                return run_mrct(args, os.path.join(work, name), with_pid(spec, nic.p.pid) if args.pid else spec, ns, extra,
                                engine_cpu=args.engine_cpu)
            finally:
                nic.stop()
                if quota:
                    quota.remove()

        for bug, clauses in bugs.items():
            rc, res, out = run(bug, clauses, bug)
            cases = res["cases"] if res else []
            # Not caught only because a host stall left its cases inconclusive
            # (the engine measured it, docs/timing.md): run the profile again,
            # up to RETRIES times.
            for attempt in range(1, RETRIES + 1):
                if not cases or any(c["verdict"] == "fail" for c in cases) or not any(
                        c["verdict"] == "inconclusive" for c in cases):
                    break
                print(f"{bug}: no case failed, some inconclusive ({[c['reason'][:80] for c in cases if c['verdict'] == 'inconclusive']}); "
                      f"running it again ({attempt} of {RETRIES})")
                rc, res, out = run(bug, clauses, f"{bug}-again{attempt}")
                cases = res["cases"] if res else []
            failed = [c["id"] for c in cases if c["verdict"] == "fail"]
            rows[bug] = {
                "clauses": clauses,
                "wire": transport(clauses),
                "caught": bool(failed),
                "failing_cases": failed,
                "ran": sum(c["verdict"] != "skipped" for c in cases),
                "skipped": sum(c["verdict"] == "skipped" for c in cases),
                "inconclusive": [c["id"] for c in cases if c["verdict"] == "inconclusive"],
                "errors": [f"{c['id']}: {c['reason'][:120]}" for c in cases if c["verdict"] == "error"],
            }
            if res is None:
                rows[bug]["errors"].append(f"no results (exit {rc}): {out[-300:]}")
    json.dump(rows, open(os.path.join(args.workdir, "wire-kill-matrix.json"), "w"), indent=2)

    print("wire kill matrix (agent+udp, or agent+pcap where marked; bug profile -> failing cases citing its clauses)")
    problems = []
    slow = args.dut_cpu is not None or args.engine_cpu is not None or args.bump is not None or bool(args.agent_as) or args.reap_stamps
    for bug, r in rows.items():
        # A DUT too slow for its wire (--dut-cpu): a profile left inconclusive
        # is an honest "cannot tell", not an escape (D111).
        held = slow and not r["caught"] and bool(r["inconclusive"])
        state = ("caught" if r["caught"] else "inconclusive" if held else "ESCAPED") + (" (pcap)" if r["wire"] == "pcap" else "")
        cases = " ".join(r["failing_cases"][:6]) + (f" (+{len(r['failing_cases']) - 6})" if len(r["failing_cases"]) > 6 else "")
        print(f"  {bug:<18} {', '.join(r['clauses']):<34} {state:<15} ran {r['ran']:>2}, skipped {r['skipped']:>2}  {cases}")
        for e in r["errors"]:
            problems.append(f"{bug}: error {e}")
        if not r["caught"] and bug not in known and not held:
            problems.append(f"{bug} escapes on the wire ({r['ran']} cases ran, {r['skipped']} skipped)")
        if r["caught"] and bug in known:
            problems.append(f"{bug} is caught on the wire now: take it off --known-escapes")
    caught = sum(r["caught"] for r in rows.values())
    print(f"wire kill matrix: {caught} of {len(rows)} profiles caught" +
          ("".join([f" with mrct-refnic held to {args.dut_cpu:g} % of a CPU" if args.dut_cpu is not None else "",
                    f" with the engine held to {args.engine_cpu:g} % of a CPU" if args.engine_cpu is not None else "",
                    f" through mrct emulate ({os.path.basename(args.bump)})" if args.bump else "",
                    " behind an agent " + ", ".join(([f"as {', '.join(args.agent_as)}"] if args.agent_as else []) +
                                                    (["stamping completions when reaped"] if args.reap_stamps else []))
                    if args.agent_as or args.reap_stamps else ""]) +
           f"; {sum(1 for r in rows.values() if not r['caught'] and r['inconclusive'])} inconclusive" if slow else ""))
    for p in problems:
        print("PROBLEM:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
