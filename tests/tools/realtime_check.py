"""The 1.2 plan on a real wire (issue 5): mrct-refnic in one network namespace,
the engine in another, joined by a veth pair; addresses only inside them.

For each wire (agent+udp, agent+pcap) and each DUT (the reference, then the
bug profiles frozen-rnr and shared-rto):
  - every case that runs (not skipped for a capability the adapter lacks) gets
    the verdict the simulated DUT with the same bug gets, or `inconclusive`
    with measured figures (docs/timing.md; at most 5 % of a wire's runs);
  - against the reference: nothing fails, at least 20 cases pass, every area of
    the plan has a passing case;
  - against a bug: every simulated failure among the cases that run fails
    (extra failures on the wire are printed), and every case that runs and
    cites a clause the bug breaks fails.
Then the reference over IPv6, over agent+udp with both ends sending through
packet sockets (tx=packet, mrct-refnic --packet-tx; a case or more of each
area), and over agent+dpdk. Then what goes wrong: a wrong token, an agent that is gone, the DUT killed in
the middle of a run (error verdicts with a reason, the run goes on, exit 3),
the engine interrupted in the middle of a run (SIGINT, SIGTERM: exit 3,
reports marked interrupted, the agent in order for the next run; stopped
twice, SIGINT then SIGTERM as a CI runner cancels: the running case cut
short, marked interrupted, reports within 2.5 s, D143),
a DUT held by its CPU quota through a registration past the call's timeout
(inconclusive, not an error: D114, D135), the DUT's frames dropped by the
engine's own interface (an MTU below the DUT's: inconclusive, D144) and one
stopped by SIGSTOP (an
error: it waited for no CPU), and mrct-refnic stopping cleanly on SIGTERM.
Last, a fabric between the engine and the DUT (`mrct emulate` holding each
MetaRoCE frame 250 us each way, no wire_rtt= given): no case fails (D145,
D146).

Needs root (namespaces); exits 77 (ctest: skipped) without it.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time

from wire_lab import DPDK_SET, Bump, CpuQuota, Netns, Refnic, dut_spec, lab_args, lab_workdir, run_mrct, sh, with_pid

BUGS = {"frozen-rnr": ["MR-RNR-4"], "shared-rto": ["MR-RTO-1", "MR-RTO-2"]}
# tx=packet: an area each of framing, set-up, placement, loss recovery,
# RNR, congestion, grants and streams.
PACKET_TX_SET = ["HDR-*", "CONN-00*", "OOO-*", "SACK-00*", "RNR-00*", "CC-00*", "GR-00*", "STR-*"]
# mrct-refnic --busy-poll over UDP sockets: framing, set-up, placement, loss recovery.
BUSY_SET = ["HDR-*", "CONN-00*", "OOO-00*", "SACK-00*"]
# mrct-refnic with every conforming variant a wire carries (D153): the
# other legal choices must pass as the reference's do, on a wire too.
VARIANTS = ("ack-each+trig-first+ackreq-none+path-random+rtt-every+grant-under+ip-fields+stream-rr+close-late+ack-first"
            "+wrap-soon+ackreq-each+reset-next+nak-psn+port-reuse+timer-tick+pace-under+answer-late"
            "+fixed-point")
# Behind the agent another implementation may bring (D159): protocol 1.0 and
# no counters; no case whose check needs a counter.
MINIMAL_AGENT_SET = ["CONN-00*", "OOO-00*", "RNR-01*", "STR-00*"]
VARIANT_SET = ["HDR-*", "CONN-00*", "OOO-00*", "SACK-00*", "RNR-00*", "STR-00*", "GR-00*", "CC-00*", "RTO-00*"]


# One case whose regions are 512 MiB on both sides (the held registration).
HELD_PLAN = """suite: {name: held registration, version: "1", spec: metaroce-1.2-model}
cases:
  - id: HELD-001
    title: A WRITE into a 512 MiB region of the DUT
    clauses: [MR-OOO-1]
    role: sender
    setup:
      - memory: {size: 536870912}
      - post_write: {size: 4096}
    expect:
      - all_complete: {}
"""

# A case that waits 2 s before its DUT posts (the stopped DUT).
STOP_PLAN = """suite: {name: stopped DUT, version: "1", spec: metaroce-1.2-model}
cases:
  - id: STOP-001
    title: The DUT posts a WRITE 2 s in
    clauses: [MR-OOO-1]
    steps:
      - at: 2s
        do: [post_write: {side: dut, size: 4096}]
    limits: {duration: 6s}
    expect:
      - all_complete: {}
"""

# The DUT writes 64 KiB in 4 KiB packets (the interface drops, D144).
IF_DROP_PLAN = """suite: {name: interface drops, version: "1", spec: metaroce-1.2-model}
cases:
  - id: IFDROP-001
    title: The DUT writes 64 KiB to the engine
    clauses: [MR-OOO-1]
    role: receiver
    # Retries that outlast a loaded host's holds (about 1.3 s in all): the
    # give-up is judged, and only the interface's drops void it.
    dut: {rto_initial: 10ms, rto_min: 10ms, rto_max: 1s}
    setup:
      - post_write: {side: dut, size: 65536}
    expect:
      - all_complete: {}
      - data_integrity: {}
"""

# Two cases, the first 8 s long (the engine stopped twice, D143): the second
# never starts.
LONG_CASE_PLAN = """suite: {name: stopped twice, version: "1", spec: metaroce-1.2-model}
cases:
  - id: LONG-001
    title: The engine writes to the DUT, and again 8 s in
    clauses: [MR-OOO-1]
    role: sender
    setup:
      - post_write: {size: 65536}
    steps:
      - at: 8s
        do: [post_write: {size: 65536}]
    limits: {duration: 10s}
    expect:
      - all_complete: {}
  - id: LONG-002
    title: The same, never started
    clauses: [MR-OOO-1]
    role: sender
    setup:
      - post_write: {size: 65536}
    expect:
      - all_complete: {}
"""


def measured(case):
    """An inconclusive verdict the engine explains with what it measured: its own
    lateness or the holds of its host against what a check needs, or a DUT that
    never reached what the check needs (a grant it never came near, a queue it
    never filled: a premise that did not arise, counted, D75), or a wire slower
    than the crossing window, measured by the DUT's quickest answer (D146)."""
    r = case["reason"]
    return case["verdict"] == "inconclusive" and any(
        k in r for k in ("late", "this check needs", "was held", "receive path dropped", "never came near", "could resolve",
                         "premise did not arise", "held the DUT", "held unevenly", "refused an operation after",
                         "quickest answer on the wire", "the lab lost frames", "the lab duplicated frames",
                         "the lab reordered frames"))


def premise(case):
    """A measured inconclusive whose premise never arose on this wire (a grant
    the DUT never came near: the veth is slower than the ceiling), as opposed to
    the engine's or the host's resolution (late, held)."""
    return measured(case) and any(k in case["reason"] for k in ("never came near", "premise did not arise"))


def verdicts(res):
    return {c["id"]: c for c in res["cases"]}


def main():
    ap = argparse.ArgumentParser()
    lab_args(ap)
    ap.add_argument("--wires", default="udp,pcap")
    ap.add_argument("--dpdk", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--retry", action=argparse.BooleanOptionalAction, default=True,
                    help="run a case that disagrees with the simulation again (the loaded runs count first verdicts)")
    ap.add_argument("--summary", help="write first-run counts per wire run to this JSON file")
    args = ap.parse_args()
    work = lab_workdir(args, "realtime")
    if work is None:
        return 77
    problems = []
    first_runs = {}  # name -> first-run counts (before any retry), for --summary

    # The simulated verdicts to compare with.
    sim = {}
    for bug in [None, *BUGS]:
        rc, res, out = run_mrct(args, os.path.join(work, f"sim-{bug or 'ref'}"), f"sim:bug={bug}" if bug else "sim")
        if res is None:
            print(out)
            return 1
        sim[bug] = verdicts(res)

    with Netns() as ns:
        def wire_run(name, spec, simv, bug=None, v6=False, extra=(), packet_tx=False, busy=False, variant=None, agent_as=()):
            """mrct-refnic up, the plan (or `extra` filters) against it, refnic down by SIGTERM.

            Real time on a shared 2-core host is noisy: a case whose verdict
            differs from the simulated one is run again alone, up to twice, and
            the first run that agrees replaces it. Every retry is printed; a
            case that never agrees stays as it was and is reported."""
            nic = Refnic(args, ns, bug, log=os.path.join(work, f"{name}.refnic.log"), v6=v6, packet_tx=packet_tx,
                         busy=busy, variant=variant, agent_as=agent_as)
            try:
                t0 = time.time()
                rc, res, out = run_mrct(args, os.path.join(work, name), with_pid(spec, nic.p.pid), ns, extra)
                t1 = time.time()
                if res is not None:
                    # A real-time case says when its time 0 was (results.md):
                    # within the run, by this host's clock.
                    for c in res["cases"]:
                        z = c.get("timing", {}).get("wall_zero_unix_ns")
                        if c["verdict"] != "skipped" and "timing" in c and (z is None or not t0 - 1 <= int(z) / 1e9 <= t1):
                            problems.append(f"{name}: {c['id']}: timing.wall_zero_unix_ns {z} is not within the run "
                                            f"({t0:.3f} to {t1:.3f})")
                        # The engine's turns count in its lateness (D137).
                        tm = c.get("timing")
                        if c["verdict"] != "skipped" and tm and not (0 <= tm.get("turn_max_us", -1) <= tm["engine_late_us"]):
                            problems.append(f"{name}: {c['id']}: timing.turn_max_us {tm.get('turn_max_us')} is missing or "
                                            f"beyond engine_late_us {tm['engine_late_us']}")
                    ran = [c for c in res["cases"] if c["verdict"] != "skipped"]
                    first_runs[name] = {
                        "runs": len(res["cases"]), "executed": len(ran),
                        "false_fail": sorted(c["id"] for c in ran if c["verdict"] == "fail" and simv[c["id"]]["verdict"] != "fail"),
                        "error": sorted(c["id"] for c in ran if c["verdict"] == "error"),
                        "inconclusive": sorted(c["id"] for c in ran if c["verdict"] == "inconclusive"),
                        "unexplained_inconclusive": sorted(c["id"] for c in ran if c["verdict"] == "inconclusive" and not measured(c)),
                        "missed": sorted(c["id"] for c in ran if simv[c["id"]]["verdict"] == "fail" and c["verdict"] != "fail"),
                        # run again by mrct after attempts inconclusive on timing alone (--timing-retries, D66)
                        "retried": sorted(c["id"] for c in ran if c.get("attempts", 1) > 1),
                    }
                    for i, c in enumerate(res["cases"]):
                        # A measured inconclusive stands in for a pass, not for a
                        # simulated failure: against a bug profile it is a miss, run again.
                        if c["verdict"] in ("skipped", simv[c["id"]]["verdict"]) or not args.retry or (
                                measured(c) and simv[c["id"]]["verdict"] != "fail"):
                            continue
                        for attempt in (1, 2):
                            _, again, _ = run_mrct(args, os.path.join(work, f"{name}-retry"), spec, ns,
                                                   ["--filter", c["id"]])
                            v = again["cases"][0] if again and again["cases"] else None
                            print(f"{name}: {c['id']} was {c['verdict']} ({c['reason'][:100]}); "
                                  f"retry {attempt}: {v['verdict'] if v else 'no result'}")
                            if v and v["verdict"] == simv[c["id"]]["verdict"]:
                                res["cases"][i] = v
                                break
                    vs = {c["verdict"] for c in res["cases"]}
                    rc = 3 if "error" in vs else 1 if "fail" in vs else 0
            finally:
                src = nic.stop()
            if src != 0:
                problems.append(f"{name}: mrct-refnic did not stop cleanly on SIGTERM (exit {src})")
            if res is None:
                problems.append(f"{name}: no results.json (exit {rc}): {out[-2000:]}")
            return rc, res

        def compare(name, res, simv, buggy=False):
            """Every case that runs has its simulated verdict; skips say why. Against
            a bug profile a case may also fail on the wire where the simulation
            passes (the bug meeting real timing: shared-rto ran out its retries in
            CC-050 over pcap): printed, not a problem; a simulated failure must
            still fail."""
            got = verdicts(res)
            ran = {k: c for k, c in got.items() if c["verdict"] != "skipped"}
            for k, c in got.items():
                if c["verdict"] == "skipped" and not any(k in c["reason"] for k in ("lacks capability", "peer addresses", "cannot run at a time base")):
                    problems.append(f"{name}: {k} skipped without a capability reason: {c['reason']}")
            doubts = []
            for k, c in ran.items():
                if c["verdict"] == "inconclusive" and measured(c):
                    doubts.append(k)  # the engine could not resolve it: said so, with figures (docs/timing.md)
                    continue
                if c["verdict"] != simv[k]["verdict"]:
                    if buggy and c["verdict"] == "fail":
                        print(f"{name}: {k} also fails on the wire (passes simulated): {c['reason'][:160]}")
                        continue
                    problems.append(f"{name}: {k} is {c['verdict']} on the wire, {simv[k]['verdict']} simulated: {c['reason']}")
            if doubts:
                print(f"{name}: inconclusive with measured figures: {sorted(doubts)}")
            # The bound is on the engine's and the host's resolution (late,
            # held); a premise the wire's rate never brought about (GR-001's
            # 100 Gbps grant on a veth) is a property of the wire, reported, not
            # bounded. agent+dpdk has no receive timestamps (frames are stamped
            # when polled): more checks are beyond its resolution; reported, not bounded.
            held = [k for k in doubts if not premise(ran[k])]
            if len(held) > 0.10 * len(ran) and not name.startswith("dpdk"):
                problems.append(f"{name}: {len(held)} of {len(ran)} runs inconclusive for the engine's or the host's "
                                f"resolution (at most 10 % here; the target under load, bench/realtime_loaded.sh, is 5 %)")
            passed = [k for k, c in ran.items() if c["verdict"] == "pass"]
            failed = sorted(k for k, c in ran.items() if c["verdict"] == "fail")
            return got, ran, passed, failed

        def check_reference(name, rc, got, ran, passed, all_areas=True):
            covered = {ran[k]["area"] for k in passed}
            missing = {c["area"] for c in got.values()} - covered
            if len(passed) < 20:
                problems.append(f"{name}: only {len(passed)} cases pass (at least 20 required)")
            if all_areas and missing:
                problems.append(f"{name}: no passing case in area(s) {sorted(missing)}")
            if rc != 0:
                problems.append(f"{name}: exit {rc} against the reference")
            print(f"{name}: {len(passed)} passed over {len(covered)} areas {sorted(covered)}, {len(got) - len(ran)} skipped")

        # The whole plan as written (--time-scale 1: fine_timing cases skipped)
        # on every wire, then the fine_timing cases 64 times slower (coarse
        # time, docs/timing.md) over agent+udp.
        listed = json.loads(subprocess.run([args.mrct, "list", "--json", args.plan], capture_output=True, text=True,
                                           check=True).stdout)
        fine = [x for c in listed if "fine_timing" in c["requires"] for x in ("--filter", c["id"])]
        for wire, scale, extra in [(w, "1", ()) for w in args.wires.split(",")] + [("udp", "auto", tuple(fine))]:
            for bug in [None, *BUGS]:
                name = f"{wire}-{bug or 'ref'}" + ("-scaled" if scale != "1" else "")
                rc, res = wire_run(name, dut_spec(wire, ns), sim[bug], bug, extra=("--time-scale", scale, *extra))
                if res is None:
                    continue
                got, ran, passed, failed = compare(name, res, sim[bug], buggy=bug is not None)
                if bug is None:
                    check_reference(name, rc, got, ran, passed, all_areas=scale == "1")
                    continue
                citing = sorted(k for k, c in ran.items() if set(c["clauses"]) & set(BUGS[bug]))
                want_failed = sorted(k for k in ran if sim[bug][k]["verdict"] == "fail")
                if not set(want_failed) <= set(failed):
                    problems.append(f"{name}: failed {failed}, simulated {want_failed}")
                for k in citing:
                    if k not in failed:
                        problems.append(f"{name}: {k} cites {BUGS[bug]} but did not fail")
                if rc != (1 if want_failed else 0):
                    problems.append(f"{name}: exit {rc}, expected {1 if want_failed else 0}")
                print(f"{name}: failed {failed}; cases that run and cite {'/'.join(BUGS[bug])}: {citing or 'none'}")

        # --- IPv6: the reference over agent+udp and agent+pcap ---------------------
        for wire in args.wires.split(","):
            name = f"{wire}-ipv6"
            rc, res = wire_run(name, dut_spec(wire, ns, v6=True), sim[None], v6=True, extra=("--time-scale", "1"))
            if res is not None:
                check_reference(name, rc, *compare(name, res, sim[None])[:3])

        # --- agent+udp sending through packet sockets (tx=packet, mrct-refnic
        # --packet-tx): the same frames verbatim, the same verdicts ----------
        rc, res = wire_run("udp-packet-tx", dut_spec("udp", ns, tx_packet=True), sim[None], packet_tx=True,
                           extra=("--time-scale", "1", *[x for p in PACKET_TX_SET for x in ("--filter", p)]))
        if res is not None:
            check_reference("udp-packet-tx", rc, *compare("udp-packet-tx", res, sim[None])[:3], all_areas=False)
        # mrct-refnic's last line counts what left by its packet socket: all
        # but what went before its neighbour entry for the engine was there.
        log = open(os.path.join(work, "udp-packet-tx.refnic.log")).read()
        m = re.search(r"stopped; \d+ frames in, (\d+) out \((\d+) through the packet socket\)", log)
        if not m or int(m.group(2)) < int(m.group(1)) // 2:
            problems.append(f"udp-packet-tx: mrct-refnic sent too little through its packet socket: {m and m.group(0)}")
        else:
            print(f"udp-packet-tx: mrct-refnic sent {m.group(2)} of {m.group(1)} frames through its packet socket")

        # --- mrct-refnic spinning on its UDP sockets (--busy-poll): the same
        # verdicts, with the DUT never asleep between frames ------------------
        rc, res = wire_run("udp-busy-dut", dut_spec("udp", ns), sim[None], busy=True,
                           extra=("--time-scale", "1", *[x for p in BUSY_SET for x in ("--filter", p)]))
        if res is not None:
            check_reference("udp-busy-dut", rc, *compare("udp-busy-dut", res, sim[None])[:3], all_areas=False)

        # --- mrct-refnic making the model's open choices otherwise (D153): the
        # verdicts the reference gets ---------------------------------------------
        rc, res = wire_run("udp-variants", dut_spec("udp", ns), sim[None], variant=VARIANTS,
                           extra=("--time-scale", "1", *[x for p in VARIANT_SET for x in ("--filter", p)]))
        if res is not None:
            check_reference("udp-variants", rc, *compare("udp-variants", res, sim[None])[:3], all_areas=False)

        # --- behind a 1.0 agent that reports no counters (D159): the verdicts
        # the reference gets ---------------------------------------------------
        rc, res = wire_run("udp-minimal-agent", dut_spec("udp", ns), sim[None], agent_as=("1.0", "no-counters"),
                           extra=("--time-scale", "1", *[x for p in MINIMAL_AGENT_SET for x in ("--filter", p)]))
        if res is not None:
            check_reference("udp-minimal-agent", rc, *compare("udp-minimal-agent", res, sim[None])[:3], all_areas=False)

        # --- agent+dpdk over net_af_packet on the veth: DPDK_SET ----------------
        if args.dpdk:
            filters = ["--time-scale", "1"] + [x for p in DPDK_SET for x in ("--filter", p)]
            rc, res = wire_run("dpdk-ref", dut_spec("dpdk", ns), sim[None], extra=filters)
            if res is not None:
                # Without receive timestamps the RTO cases may all be beyond its
                # resolution (inconclusive with figures): no area is required.
                check_reference("dpdk-ref", rc, *compare("dpdk-ref", res, sim[None])[:3], all_areas=False)

        # --- When things go wrong -------------------------------------------------
        few = ["--filter", "CONN-001", "--filter", "OOO-001", "--filter", "STR-003"]
        nic = Refnic(args, ns)
        try:
            rc, res, out = run_mrct(args, os.path.join(work, "bad-token"), dut_spec("udp", ns, token="wrong"), ns, few)
            v = [c["verdict"] for c in res["cases"]] if res else []
            if rc != 3 or v != ["error"] * 3 or "unauthorized" not in res["cases"][0]["reason"]:
                problems.append(f"wrong token: exit {rc}, verdicts {v}, {res and res['cases'][0]['reason']}")
        finally:
            nic.stop()
        # A DUT sending IPv4 with DF clear (df-clear through --raw-iface) over
        # agent+udp: its ICRC fails over the header a socket implies, the
        # case is an error, and the reason says what the frames were.
        nic = Refnic(args, ns, "df-clear", raw=True)
        try:
            rc, res, out = run_mrct(args, os.path.join(work, "df-clear-udp"), dut_spec("udp", ns, timeout="500ms"), ns,
                                    ["--filter", "HDR-001"])
            v = [c["verdict"] for c in res["cases"]] if res else []
            why = res["cases"][0]["reason"] if res and res["cases"] else ""
            if rc != 3 or v != ["error"] or "bad_icrc" not in why or "MR-HDR-6" not in why:
                problems.append(f"df-clear over agent+udp: exit {rc}, verdicts {v}, {why[:300]}")
            else:
                print(f"df-clear over agent+udp: error, {why[:160]}...")
        finally:
            nic.stop()
        # A DUT held by its CPU quota through a registration (D114, D135):
        # mrct-refnic at 1 % of a CPU, asked to register a 512 MiB region,
        # fills it in one stretch of kernel work, then repays that debt to its
        # quota for seconds, runnable and not run, its wait not yet in the
        # kernel's accounting. The register_mr goes unanswered past its 2 s
        # timeout: the case is inconclusive, a DUT too slow for its timeout,
        # with the waits the engine read (an error before D135).
        held_plan = os.path.join(work, "held-registration.yaml")
        with open(held_plan, "w") as f:
            f.write(HELD_PLAN)
        nic = Refnic(args, ns, log=os.path.join(work, "held-registration.refnic.log"))
        quota = CpuQuota(nic.p.pid, 1)
        try:
            rc, res, out = run_mrct(args, os.path.join(work, "held-registration"),
                                    with_pid(dut_spec("udp", ns), nic.p.pid), ns, plan=held_plan)
            c = res["cases"][0] if res and res["cases"] else {}
            why = c.get("reason", "")
            if c.get("verdict") != "inconclusive" or "D114" not in why or "register_mr" not in why:
                problems.append(f"held registration: exit {rc}, {c.get('verdict')}: {why[:400]} {out[-300:]}")
            else:
                print(f"held registration: inconclusive, {why[:200]}...")
        finally:
            quota.remove()  # unthrottled first: it finishes its work and stops on SIGTERM
            nic.stop()
        # Frames dropped by the engine's own interface, below its sockets
        # (D144): its veth end at MTU 1500 while mrct-refnic's is at 9000, so
        # the kernel drops each 4 KiB data frame of the DUT's on arrival
        # (rx_dropped). The DUT resends and gives up: a conforming DUT would
        # fail all_complete on a record that lacks its frames; the case is
        # inconclusive, naming the interface.
        drop_plan = os.path.join(work, "if-drops.yaml")
        with open(drop_plan, "w") as f:
            f.write(IF_DROP_PLAN)
        nic = Refnic(args, ns, log=os.path.join(work, "if-drops.refnic.log"))
        sh("ip", "-n", ns.e, "link", "set", ns.ve, "mtu", "1500")
        try:
            rc, res, out = run_mrct(args, os.path.join(work, "if-drops"), dut_spec("udp", ns), ns, plan=drop_plan,
                                    extra=["--timing-retries", "0"])
            c = res["cases"][0] if res and res["cases"] else {}
            why = c.get("reason", "")
            tm = c.get("timing", {})
            named = [a for a in c.get("assertions", []) if f"the engine's interface {ns.ve} dropped" in a.get("message", "")]
            if c.get("verdict") != "inconclusive" or not named or not tm.get("if_rx_dropped"):
                problems.append(f"interface drops: exit {rc}, {c.get('verdict')}: {why[:400]} {out[-300:]}")
            else:
                print(f"interface drops: inconclusive, {tm['if_rx_dropped']} received frames dropped on {tm['ifaces']}")
        finally:
            sh("ip", "-n", ns.e, "link", "set", ns.ve, "mtu", "9000")
            nic.stop()
        # The other side of it: a DUT stopped by a signal in the middle of a
        # case waits for no CPU (its threads are not runnable, state T), so
        # the call it leaves unanswered stays an error, pid= or not. Stopped
        # a second into STOP-001, whose step posts at 2 s.
        stop_plan = os.path.join(work, "stopped-dut.yaml")
        with open(stop_plan, "w") as f:
            f.write(STOP_PLAN)
        nic = Refnic(args, ns)
        try:
            def stop_it(_engine):
                time.sleep(1.0)
                os.kill(nic.p.pid, signal.SIGSTOP)

            rc, res, out = run_mrct(args, os.path.join(work, "stopped-dut"), with_pid(dut_spec("udp", ns), nic.p.pid), ns,
                                    plan=stop_plan, during=stop_it)
            c = res["cases"][0] if res and res["cases"] else {}
            why = c.get("reason", "")
            if rc != 3 or c.get("verdict") != "error" or "no response within" not in why or "D114" in why:
                problems.append(f"stopped DUT: exit {rc}, {c.get('verdict')}: {why[:400]} {out[-300:]}")
            else:
                print(f"stopped DUT: error, {why[:160]}")
        finally:
            os.kill(nic.p.pid, signal.SIGCONT)
            nic.stop()
        # The host too slow for the engine (D136): the engine's process held
        # to 5 % of a CPU (a cgroup quota, 95 ms held in every 100 ms), the
        # DUT untouched. A conforming DUT gives up work, fails paths and
        # refuses posts while the engine sends no ACKs; none of that may fail
        # it or end a case in error: inconclusive with the figures, or pass.
        # RTO-004 (paths failed under the holds: rto_independence), RNR-009
        # (a SEND given up: completion_count) and STR-050 (a post refused,
        # its connection gone): each failed or errored the reference so
        # before D136 (bench/case_on_wire.py --engine-cpu 5).
        nic = Refnic(args, ns, log=os.path.join(work, "engine-starved.refnic.log"))
        try:
            rc, res, out = run_mrct(args, os.path.join(work, "engine-starved"), with_pid(dut_spec("udp", ns), nic.p.pid), ns,
                                    ["--filter", "RTO-004", "--filter", "RNR-009", "--filter", "STR-050"], engine_cpu=5)
            got = {c["id"]: c for c in res["cases"]} if res else {}
            bad = {k: c for k, c in got.items()
                   if c["verdict"] not in ("pass", "inconclusive") or (c["verdict"] == "inconclusive" and not measured(c))}
            if len(got) != 3 or bad:
                problems.append(f"engine starved: exit {rc}, " +
                                "; ".join(f"{k} {c['verdict']}: {c['reason'][:300]}" for k, c in bad.items()) + out[-300:])
            else:
                print("engine starved: " + ", ".join(f"{k} {c['verdict']}" for k, c in sorted(got.items())))
        finally:
            nic.stop()
        # Nobody listening: every case is an error with the reason; the run ends.
        rc, res, out = run_mrct(args, os.path.join(work, "gone"), dut_spec("udp", ns), ns, few)
        v = [c["verdict"] for c in res["cases"]] if res else []
        if rc != 3 or v != ["error"] * 3 or "cannot reach the agent" not in res["cases"][0]["reason"]:
            problems.append(f"agent gone: exit {rc}, verdicts {v}, {res and res['cases'][0]['reason']}")
        # The DUT killed in the middle of a run: that case and the ones after it
        # are errors; the cases before it keep their verdicts.
        nic = Refnic(args, ns)
        cmd = ["ip", "netns", "exec", ns.e, args.mrct, "-q", "run", args.plan, "--dut", dut_spec("udp", ns, timeout="500ms"),
               "--out", os.path.join(work, "killed"), "--filter", "CONN-00*", "--repeat", "400"]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(2.0)
        nic.p.kill()
        nic.p.wait()
        outp = p.communicate(timeout=120)[0]
        killed = os.path.join(work, "killed", "results.json")
        res = json.load(open(killed)) if os.path.exists(killed) else {"cases": []}
        v = [c["verdict"] for c in res["cases"]]
        if p.returncode != 3 or "error" not in v or v[0] != "pass" or len(v) < 5:
            problems.append(f"DUT killed mid-run: exit {p.returncode}, verdicts {v}\n{outp[-1500:]}")
        else:
            first_err = v.index("error")
            print(f"DUT killed mid-run: {first_err} cases finished before, then errors: "
                  f"{res['cases'][first_err]['reason']}")
        # The engine interrupted in the middle of a run (a user's Ctrl-C, a CI
        # runner's SIGTERM): exit 3, reports marked interrupted that cover the
        # cases finished, none of them an error for it; the agent it left is
        # still in order for the next run.
        nic = Refnic(args, ns, log=os.path.join(work, "interrupted.refnic.log"))
        try:
            for sig in (signal.SIGINT, signal.SIGTERM):
                def interrupt(engine):
                    time.sleep(2.0)
                    engine.send_signal(sig)

                out_dir = os.path.join(work, f"interrupted-{sig.name}")
                rc, res, out = run_mrct(args, out_dir, dut_spec("udp", ns), ns, ["--filter", "CONN-00*", "--repeat", "400"],
                                        during=interrupt)
                v = [c["verdict"] for c in res["cases"]] if res else []
                if (rc != 3 or not res or not res.get("interrupted") or not 0 < len(v) < res.get("planned", 0)
                        or set(v) - {"pass", "inconclusive"}):
                    problems.append(f"engine interrupted by {sig.name}: exit {rc}, interrupted "
                                    f"{res and res.get('interrupted')}, {len(v)} cases {sorted(set(v))}\n{out[-800:]}")
                else:
                    print(f"engine interrupted by {sig.name}: exit 3, {len(v)} of {res['planned']} cases reported")
            # Stopped twice (D143), as GitHub Actions cancels a job: SIGINT,
            # then SIGTERM (7.5 s later there; SIGKILL 2.5 s after that). The
            # case running (8 s long here) is cut short at the second: skipped,
            # marked interrupted, its capture written; the reports come within
            # the 2.5 s.
            long_plan = os.path.join(work, "long_case.yaml")
            with open(long_plan, "w") as f:
                f.write(LONG_CASE_PLAN)
            second = {}

            def twice(engine):
                time.sleep(2.5)
                engine.send_signal(signal.SIGINT)
                time.sleep(0.5)
                engine.send_signal(signal.SIGTERM)
                second["at"] = time.monotonic()
                engine.wait(timeout=60)
                second["exit_s"] = time.monotonic() - second["at"]

            out_dir = os.path.join(work, "interrupted-twice")
            rc, res, out = run_mrct(args, out_dir, dut_spec("udp", ns), ns, ["--capture", "fail"], plan=long_plan,
                                    during=twice)
            cases = res["cases"] if res else []
            exit_s = second.get("exit_s", 99.0)
            if (rc != 3 or not res or not res.get("interrupted") or len(cases) != 1
                    or cases[0].get("verdict") != "skipped" or cases[0].get("interrupted") is not True
                    or not cases[0].get("reason", "").startswith("interrupted: the run was stopped a second time while")
                    or not os.path.exists(os.path.join(out_dir, cases[0].get("pcap", "-")))
                    or not os.path.exists(os.path.join(out_dir, "junit.xml")) or exit_s > 2.5):
                problems.append(f"engine stopped twice: exit {rc} {exit_s:.2f} s after the second signal, "
                                f"cases {cases}\n{out[-800:]}")
            else:
                print(f"engine stopped twice: exit 3 {exit_s:.2f} s after the second signal, "
                      f"{cases[0]['id']} skipped, interrupted, its capture written")
            rc, res, out = run_mrct(args, os.path.join(work, "after-interrupt"), dut_spec("udp", ns), ns,
                                    ["--filter", "CONN-001"])
            v = [c["verdict"] for c in res["cases"]] if res else []
            if rc != 0 or v != ["pass"]:
                problems.append(f"the agent after an interrupted run: exit {rc}, verdicts {v}\n{out[-800:]}")
        finally:
            nic.stop()

    def through_fabric(name, fabric_yaml, filters):
        """The plan's cases matching `filters` against mrct-refnic through
        `mrct emulate` with `fabric_yaml`, in a namespace of its own between
        the two veths (the agents' TCP crosses it untouched): the cases and
        the cases that failed, erred or were inconclusive unexplained."""
        fabric = os.path.join(work, f"{name}-fabric.yaml")
        with open(fabric, "w") as f:
            f.write(fabric_yaml)
        with Netns(bump=True) as nb, Bump(nb, args.mrct, fabric, os.path.join(work, f"{name}.log")):
            nic = Refnic(args, nb, log=os.path.join(work, f"{name}.refnic.log"))
            try:
                filt = [x for g in filters for x in ("--filter", g)]
                rc, res, out = run_mrct(args, os.path.join(work, name), with_pid(dut_spec("udp", nb), nic.p.pid), nb, filt)
            finally:
                nic.stop()
        cases = res["cases"] if res else []
        bad = [c for c in cases if c["verdict"] in ("fail", "error") or (c["verdict"] == "inconclusive" and not measured(c))]
        said = f"exit {rc}, " + "; ".join(f"{c['id']} {c['verdict']}: {c.get('reason', '')[:300]}" for c in bad) + out[-300:]
        return cases, bad, said

    def counts(cases):
        return ", ".join(f"{v} {sum(c['verdict'] == v for c in cases)}" for v in ("pass", "inconclusive"))

    # A fabric between the engine and the DUT (D146): `mrct emulate` holds
    # each MetaRoCE frame 250 us each way. The crossing window (200 us) does
    # not cover that round trip, and no wire_rtt= says so: the DUT's quickest
    # answer on the wire measures it, and no case may fail or end in error
    # (before D146 no_go_back_n failed the reference through such a fabric,
    # and resend_identity where the fabric delivered a resend before its
    # original, D145).
    cases, bad, said = through_fabric("bump", "paths: 8\ndelay: 250us\n", ["SACK-00*", "PATH-05*"])
    answers = [c.get("timing", {}).get("answer_min_run_us", 0) for c in cases]
    if not cases or bad or max(answers) < 500:
        problems.append(f"through a fabric: quickest answers {answers}, {said}")
    else:
        print(f"through a fabric of 250 us each way: {counts(cases)}; the DUT's quickest answer "
              f"{min(a for a in answers if a):.0f} us")

    # A lab that loses, copies and reorders frames where no interface of the
    # engine's counts it (D148-D151): `mrct emulate` dropping 1 %, copying
    # 1 % and holding 2 % of MetaRoCE frames 50 us (reordered within their
    # flow), each way. No case may fail or end in error (before D148-D150
    # the reference failed acks_conform, resend_identity, no_go_back_n and
    # others there), every inconclusive must say why, and the lab must have
    # shown itself in at least one case (the DUT's counters or its frames).
    cases, bad, said = through_fabric(
        "lab", "paths: 8\nseed: 7\nimpair:\n  - loss: {p: 0.01}\n  - duplicate: {p: 0.01}\n"
        "  - reorder: {p: 0.02, extra: 50us}\n", ["SACK-00*", "PATH-05*", "CONN-001"])
    shown = [c for c in cases if any(k in c.get("reason", "") for k in ("(D148)", "(D149)", "(D150)", "(D151)"))]
    if not cases or bad or not shown:
        problems.append(f"a lab that loses, copies and reorders frames: {len(shown)} cases voided by it, {said}")
    else:
        print(f"a lab that loses, copies and reorders frames: {counts(cases)}; {len(shown)} voided by what the lab "
              "did (D148-D151)")

    if args.summary:
        json.dump(first_runs, open(args.summary, "w"), indent=2)
    for p in problems:
        print("PROBLEM:", p)
    print(f"realtime check: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
