// mrct: the command line. The only module that knows every other module.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "app/commands.h"
#include "endpoint/config.h"

namespace {

void setup_logging(int verbose, bool quiet) {
    // Logs go to stderr only: stdout carries machine output (--json).
    auto logger = spdlog::stderr_color_mt("mrct");
    spdlog::set_default_logger(logger);
    spdlog::set_pattern("%^%l%$: %v");
    if (quiet)
        spdlog::set_level(spdlog::level::err);
    else if (verbose >= 2)
        spdlog::set_level(spdlog::level::trace);
    else if (verbose == 1)
        spdlog::set_level(spdlog::level::debug);
    else
        spdlog::set_level(spdlog::level::info);
}

// A plan is a YAML file, or the folder holding its plan.yaml (what a user
// types: `mrct run testplans/metaroce-1.2`). Rewrites a folder to its
// plan.yaml; returns an error message, or "" when `p` names a plan.
std::string resolve_plan(std::string& p) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
        const auto f = fs::path(p) / "plan.yaml";
        if (!fs::is_regular_file(f, ec)) return "the folder " + p + " holds no plan.yaml (give the plan's YAML file)";
        p = f.string();
        return "";
    }
    if (!fs::exists(p, ec)) return "File does not exist: " + p;
    return "";
}
const CLI::Validator k_plan_path(resolve_plan, "PLAN", "plan");

// `--plan-limit NAME=VALUE` on every command that reads a plan; checked as
// the command line is parsed, applied after.
std::vector<std::string> g_plan_limits;
void add_plan_limit(CLI::App* cmd) {
    std::string names;
    for (const auto& i : mrct::plan::limit_table()) {
        mrct::plan::limits d;
        names += std::string("\n  ") + i.name + " (default " + std::to_string(d.*(i.field)) + "): " + i.help;
    }
    cmd->add_option("--plan-limit", g_plan_limits,
                    "NAME=VALUE: raise (or lower) a limit a plan is loaded under (repeatable; bytes may end in KiB,\n"
                    "MiB, GiB; docs/plan-format.md, Limits). A plan over a limit is refused where it goes over:" + names)
        ->check(CLI::Validator(
            [](std::string& v) {
                mrct::plan::limits l;
                auto st = mrct::plan::set_limit(l, v);
                return st ? std::string() : st.err().message;
            },
            "NAME=VALUE", "plan limit"));
    cmd->add_option("--plan-include-root", mrct::app::plan_limits().include_roots,
                    "A folder the plan's includes may also come from (repeatable; by default only the plan's own\n"
                    "folder and its subfolders)")
        ->check(CLI::ExistingDirectory);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"mrct — MetaRoCE conformance test engine and traffic emulator"};
    app.require_subcommand(1);
    int verbose = 0;
    bool quiet = false;
    app.add_flag("-v,--verbose", verbose, "More log output on stderr (-vv for trace)");
    app.add_flag("-q,--quiet", quiet, "Only errors on stderr");
    app.set_version_flag("--version", std::string(mrct::app::version_string()));

    mrct::app::decode_args dec;
    auto* decode = app.add_subcommand("decode", "Decode a pcap: one summary line (or one JSON object) per frame");
    decode->add_option("file", dec.path, "Capture file (pcap or pcapng; Ethernet or raw IP)")->required();
    decode->add_flag("--json", dec.json, "One JSON object per frame on stdout (fields: docs/decode-json.md)");
    decode->add_flag("--payload", dec.payload, "With --json: include payload bytes as hex");
    decode->add_flag("--no-icrc", dec.no_icrc, "Do not verify ICRCs");
    decode->add_option("-c,--count", dec.count, "Stop after this many frames");

    mrct::app::samples_args smp;
    auto* samples = app.add_subcommand(
        "samples", "Write a pcap of sample MetaRoCE frames: one of every packet type, or seeded random ones");
    samples->add_option("-o,--out", smp.path, "Output pcap")->required();
    samples->add_option("--random", smp.random, "Write N random frames per opcode instead of the catalog");
    samples->add_option("--seed", smp.seed, "Seed for --random");
    samples->add_option("--ip", smp.ip_version, "IP version for --random (4 or 6)")->check(CLI::IsMember({4, 6}));
    samples->add_option("--opcode", smp.opcodes, "Opcodes for --random (names, e.g. WRITE ACK; default all)");

    mrct::app::simulate_args sim;
    auto* simulate = app.add_subcommand(
        "simulate", "Run a transfer between reference endpoints over the fabric in virtual time; print JSON metrics");
    simulate->add_option("--config", sim.config, "YAML file with the options below (docs/simulate.md)");
    simulate->add_flag("--pretty", sim.pretty, "Indent the JSON");
    simulate->add_flag("--small-pages", sim.small_pages,
                       "Do not ask for transparent huge pages for the heap (by default the heap is advised "
                       "MADV_HUGEPAGE: same results, faster; docs/simulate.md)");
    auto kv = [&](const char* name, const char* help) {
        std::string key = name;
        // Every option may be given more than once: the repeatable ones
        // (--path-delay, --fail-path, --impair) add up, the others take the last.
        simulate->add_option_function<std::vector<std::string>>(
            std::string("--") + name,
            [&sim, key](const std::vector<std::string>& vs) {
                for (const auto& v : vs) sim.overrides.push_back(key + "=" + v);
            },
            help);
    };
    kv("paths", "Paths per connection (1..256; default 8)");
    kv("senders", "Senders into one receiver (incast; default 1)");
    kv("seed", "Seed (default 1)");
    kv("size", "Bytes per message (default 1048576)");
    kv("messages", "Messages per sender (default 16)");
    kv("streams", "Streams per connection (default 1)");
    kv("outstanding", "Closed loop: at most N messages in flight per sender, the next posted on completion (default: all at once)");
    kv("op", "write or send (default write)");
    kv("payload",
       "real (default): every data packet carries its bytes, ICRC computed and checked, placed in memory; symbolic:\n"
       "packets describe their payload (message and offset are in their headers) and nothing is copied or\n"
       "CRC'd over it, with the same metrics, corruption included (docs/simulate.md \"Payload\")");
    kv("rate", "Link rate per path and direction (default 100Gbps)");
    kv("delay", "One-way propagation delay per path (default 2us)");
    kv("loss", "Bernoulli loss probability per path, sender to receiver (default 0)");
    kv("path-delay", "PATH:EXTRA one-way delay on one path, e.g. 1:500us (repeatable)");
    kv("fail-path", "PATH:TIME the path fails (blackhole), e.g. 3:2ms (repeatable)");
    std::string bug_names;
    for (const auto& b : mrct::endpoint::bug_profiles()) bug_names += (bug_names.empty() ? "" : ", ") + std::string(b.name);
    static const std::string bug_help = "Bug profile of the senders: none (default), " + bug_names +
                                        " (docs/bug-profiles.md, `mrct docs bugs`)";
    kv("bug-sender", bug_help.c_str());
    kv("bug-receiver", "Bug profile of the receiver (the same names)");
    kv("inbound-gbps", "Receiver inbound rate shared by grants (default 400)");
    kv("mtu", "Payload bytes per packet (default 4096)");
    kv("receiver-link", "Rate of the receiver's own link shared by all senders, RED ECN marking (default: none)");
    kv("time-limit", "Virtual-time limit (default 10s)");
    kv("impair",
       "KIND[:KEY=VALUE,...] a fabric stage added to the senders' paths (repeatable), e.g.\n"
       "corrupt:p=0.01,path=2 or delay:delay=0us,jitter=pareto,jitter_param=1us,dir=both. Keys: the stage's\n"
       "parameters (`mrct docs fabric`), path=N|all, sender=N|all, dir=to_receiver|to_sender|both\n"
       "(defaults all, all, to_receiver); after the path's queue and delay, in order (docs/simulate.md)");

    mrct::app::emulate_args em;
    auto* emulate = app.add_subcommand(
        "emulate", "A bump in the wire between two DUTs: MetaRoCE frames pass the fabric's stages per path (UDP source\n"
                   "port), everything else passes untouched; per-path counters, a capture of each port (docs/emulator.md)");
    emulate->add_option("--port-a", em.port_a,
                        "The port facing DUT A: an interface (pcap:IFACE or IFACE, through libpcap) or a DPDK port\n"
                        "(dpdk:PORT, by index or device name; needs --eal)")
        ->required();
    emulate->add_option("--port-b", em.port_b, "The port facing DUT B (as --port-a)")->required();
    emulate->add_option("--eal", em.eal,
                        "DPDK ports: the EAL arguments, e.g. \"--no-huge -l 1 --vdev=net_af_packet0,iface=eth1\n"
                        "--vdev=net_af_packet1,iface=eth2\" (with --busy-poll the emulator's core spins on the ports)");
    emulate->add_option("--config", em.config,
                        "YAML: paths, seed, select (hash|learn), pin, delay, path_delay, rate, impair (docs/emulator.md);\n"
                        "without it, 8 plain paths")
        ->check(CLI::ExistingFile);
    emulate->add_option("--out", em.out, "Folder for port-a.pcap, port-b.pcap (each port's wire) and emulate.json");
    emulate->add_option("--duration", em.duration, "Stop after this long (e.g. 30s); default: until SIGINT/SIGTERM");
    emulate->add_option("--progress", em.progress, "Live progress on stderr every this long (0: none)")->capture_default_str();
    emulate->add_flag("--no-capture", em.no_capture, "Write no captures (forwarding rate benchmarks)");
    emulate->add_flag("--busy-poll", em.busy_poll,
                      "Never sleep: one core polls the ports and the timers, so no frame waits for a thread to wake");

    mrct::app::interop_args io;
    auto* interop = app.add_subcommand(
        "interop", "Drive two DUTs' agents against each other: A opens a connection to B, both post a seeded workload\n"
                   "(WRITEs on several streams, SENDs on several tags, one tag's receives posted late to draw RNRs);\n"
                   "exit 0 when every message completed and arrived intact, 1 otherwise, 3 an agent failed (docs/emulator.md)");
    interop->add_option("--a", io.a, "DUT A's agent HOST:PORT (opens the connection)")->required();
    interop->add_option("--b", io.b, "DUT B's agent HOST:PORT")->required();
    interop->add_option("--token-a", io.token_a, "A's agent token");
    interop->add_option("--token-b", io.token_b, "B's agent token");
    interop->add_option("--param", io.params, "NAME=VALUE configured on both DUTs (repeatable; docs/agent-protocol.md)");
    interop->add_option("--writes", io.writes, "WRITEs per direction")->capture_default_str();
    interop->add_option("--write-size", io.write_size, "Bytes per WRITE")->capture_default_str()->check(CLI::Range(1u, 16u << 20));
    interop->add_option("--sends", io.sends, "SENDs per direction")->capture_default_str();
    interop->add_option("--send-size", io.send_size, "Bytes per SEND")->capture_default_str()->check(CLI::Range(1u, 16u << 20));
    interop->add_option("--streams", io.streams, "Streams the messages go round")->capture_default_str()->check(CLI::Range(1u, 65535u));
    interop->add_option("--tags", io.tags, "Tags the SENDs go round")->capture_default_str()->check(CLI::Range(1u, 65535u));
    interop->add_flag("--no-rnr", io.no_rnr, "Post every receive before the SENDs (no RNR)");
    interop->add_option("--rnr-hold", io.rnr_hold, "How long the last tag's receives are held back")->capture_default_str();
    interop->add_flag("--one-way", io.one_way, "Only A sends");
    interop->add_option("--seed", io.seed, "Seed of the data and the DUTs' reset")->capture_default_str();
    interop->add_option("--timeout", io.timeout, "For every message to complete")->capture_default_str();
    interop->add_option("--out", io.out, "Also write the JSON summary to this file");

    mrct::app::check_args ck;
    auto* check = app.add_subcommand(
        "check", "Passive conformance: judge DUTs from a capture of their own wire (an `mrct emulate --out` folder: each\n"
                 "DUT from its port's capture; or pcap files: every MetaRoCE address in them, or --dut); exit 0 nothing\n"
                 "failed, 1 a check failed, 2 bad input (docs/emulator.md)");
    check->add_option("inputs", ck.inputs, "Emulator output folders or capture files")->required()->check(CLI::ExistingPath);
    check->add_option("--dut", ck.duts, "Judge only this address (repeatable)");
    check->add_option("--param", ck.params,
                      "NAME=VALUE a protocol parameter in force on the DUTs (repeatable; the `configure` names, e.g.\n"
                      "rto_min=1ms; default: the spec's §5 values)");
    check->add_option("--crossing", ck.crossing,
                      "How long a frame the capture shows going to the DUT may still have been on its way")
        ->capture_default_str();
    check->add_option("--max-hold", ck.max_hold,
                      "How long the DUTs' host may have held them at any moment (software DUTs beside the emulator);\n"
                      "a timing verdict that a hold this long could change is inconclusive. 0 for DUTs that keep\n"
                      "their own time (NICs): every timing verdict stands")
        ->capture_default_str();
    check->add_option("--capture-lost", ck.capture_lost,
                      "Frames the capture files' capturer dropped before recording them (tcpdump's \"dropped by kernel\",\n"
                      "a port's missed count): with any, no verdict on those files stands (inconclusive, saying so).\n"
                      "An emulator folder's own figure (emulate.json lost_in) is read from it")
        ->capture_default_str();
    check->add_option("--out", ck.out, "Folder for report.html, results.json, junit.xml");

    mrct::app::run_args ra;
    auto* run = app.add_subcommand("run", "Run a test plan against a DUT; exit 0 all passed, 1 a case failed, 2 plan error, 3 infrastructure error");
    run->add_option("plan", ra.plan, "Test plan: its YAML file, or the folder holding its plan.yaml")->required()->transform(k_plan_path);
    run->add_option("--dut", ra.dut,
                    "DUT: sim (reference, in-process, virtual time), sim:bug=NAME (a bug profile, see `mrct docs bugs`),\n"
                    "sim:variant=NAME[+NAME...] (the reference making other legal choices, see `mrct docs variants`),\n"
                    "sim:bug=NAME,variant=NAME[+NAME...] (both),\n"
                    "so:PATH.so[,isolate=process|none][,call_limit=60s][,KEY=VALUE...] (a DUT library behind the C ABI of\n"
                    "dut_adapters/abi/mrct_dut.h, virtual time, a child process per case unless isolate=none; other options\n"
                    "go to the library, e.g. bug=NAME; docs/dut-abi.md), rtl[:bug=NAME][,waveform=F.fst] (the RTL DUT: the\n"
                    "Verilated core of dut_adapters/rtl behind the same ABI, clean or with a planted define; docs/rtl.md),\n"
                    "agent+udp:agent=HOST:PORT,dut=IP,local=IP[+IP...][,token=T][,timeout=2s][,host=shared|separate][,pid=PID]\n"
                    "(an agent, e.g. mrct-refnic, and MetaRoCE over UDP sockets, in real time; local=IP+IP...: an address for\n"
                    "each further peer of a case with several; host=separate: the DUT is on\n"
                    "other hardware; pid: the DUT's process on this host, whose waits for a CPU are read; tx=packet[,iface=IF]\n"
                    "[,dut_mac=MAC]: frames leave by a packet socket, root), agent+pcap:...,iface=IF[,dut_mac=MAC] (raw Ethernet\n"
                    "through libpcap on IF), agent+dpdk:...,dut_mac=MAC[,port=P],eal=EAL ARGS (a DPDK port; eal= last).\n"
                    "docs/adapters.md");
    run->add_option("--filter", ra.filters, "Only cases whose ID matches this glob (repeatable)");
    run->add_option("--clause", ra.clauses, "Only cases citing a clause matching this glob, e.g. MR-RNR-* (repeatable)");
    run->add_option("--seed", ra.seed, "Run seed (same seed, same results)");
    run->add_option("--repeat", ra.repeat, "Run each case N times with different seeds")->check(CLI::Range(1u, 100000u));
    run->add_option("--jobs,-j", ra.jobs, "Cases run in parallel")->check(CLI::Range(1u, 256u));
    run->add_option("--out", ra.out, "Directory for report.html, results.json and junit.xml (docs/reports.md)");
    run->add_option("--shard", ra.shard, "Run a deterministic slice K/N of the cases (merge with `mrct report merge`)");
    run->add_option("--capture", ra.capture, "pcap per case in OUT/pcap: all, fail (failed and error cases; default) or none")
        ->check(CLI::IsMember({"all", "fail", "none"}));
    run->add_option("--time-scale", ra.time_scale,
                    "Time base for cases that require fine_timing (docs/timing.md, coarse time): auto (default) runs\n"
                    "them as written on a DUT that holds sub-millisecond timing (sim) and 64 times slower on one that\n"
                    "does not (the real-time adapters): every time and timer in the case times 64, every rate / 64,\n"
                    "RNR TimerCodes +12 (less where the table ends); 1 never scales them (skipped where the DUT lacks fine_timing); K (2, 4, ...,\n"
                    "128) runs them K times slower on any DUT. Other cases always run as written");
    run->add_option("--max-errors", ra.max_errors,
                    "Stop starting cases after N consecutive errors (a DUT or agent gone: the rest would repeat it);\n"
                    "the results cover the cases run and say why the run stopped; exit 3. 0: never stop")
        ->capture_default_str();
    run->add_flag("--fail-on-inconclusive", ra.fail_on_inconclusive,
                  "Exit 1 where a case ended inconclusive, as where one failed (a gate that wants every case judged:\n"
                  "inconclusive says the engine or the lab could not resolve a check, or a lab lost, copied or\n"
                  "reordered frames; its reason and figures are in the results). Default: inconclusive exits 0");
    run->add_option("--timing-retries", ra.timing_retries,
                    "Real time: run a case again, with a fresh DUT and the same seed, when it ended inconclusive only\n"
                    "because the engine or its host ran too late for a check (up to N more attempts; a failure is never\n"
                    "run again; every attempt is in the results). Under --time-scale auto a case run slowed down runs\n"
                    "again twice as slow, up to 128 times. 0: never (docs/timing.md)")
        ->capture_default_str()
        ->check(CLI::Range(0u, 10u));
    run->add_option("--priority", ra.priority,
                    "Real time: the engine's scheduling priority on a host shared with other work (docs/timing.md,\n"
                    "Priority): auto (default) raises the engine to nice -10 against a real-time DUT (needs root or\n"
                    "CAP_SYS_NICE; otherwise it runs on at ordinary priority and says so), except agent+dpdk, whose\n"
                    "lcore busy-polls, and leaves it against sim;\n"
                    "off; nice:N (-20..19); fifo:N (SCHED_FIFO 1..99: wakes first, can starve a DUT on the same CPUs).\n"
                    "The host probe's threads stay at ordinary priority: they stand for the DUT. In results.json")
        ->capture_default_str();
    add_plan_limit(run);
    run->add_flag("--failures-only", ra.quiet_progress, "Print only cases that did not pass while running");

    std::string list_plan;
    bool list_json = false;
    auto* list = app.add_subcommand("list", "List a plan's cases (ID, level, peer role, clauses, title)");
    list->add_option("plan", list_plan, "Test plan (YAML file, or its folder)")->required()->transform(k_plan_path);
    add_plan_limit(list);
    list->add_flag("--json", list_json, "As JSON");

    std::string val_plan;
    auto* validate = app.add_subcommand("validate", "Check a plan without running it: errors with file:line:col; clause coverage");
    add_plan_limit(validate);
    validate->add_option("plan", val_plan, "Test plan (YAML file, or its folder)")->required()->transform(k_plan_path);

    std::vector<std::string> ex_args;
    auto* explain = app.add_subcommand("explain", "Show what a case does and checks, with its clauses' text: explain [PLAN] CASE "
                                                  "(PLAN defaults to testplans/metaroce-1.2/plan.yaml)");
    add_plan_limit(explain);
    explain->add_option("args", ex_args, "[PLAN] CASE (case ID or glob)")->required()->expected(1, 2);

    std::string st_plan = "testplans/metaroce-1.2/plan.yaml", st_out;
    unsigned st_jobs = 2;
    auto* selftest = app.add_subcommand("selftest", "Run the plan against the reference DUT (must all pass), its conforming variants (each must all pass) and every bug profile (each must be caught by a case citing its clause, in the reference and planted with every variant); print the kill matrix");
    selftest->add_option("--plan", st_plan, "Test plan (YAML file, or its folder)")->transform(k_plan_path);
    add_plan_limit(selftest);
    selftest->add_option("--jobs,-j", st_jobs, "Cases run in parallel")->check(CLI::Range(1u, 256u));
    selftest->add_option("--out", st_out, "Directory for kill-matrix.json");
    std::string st_dut = "sim";
    selftest->add_option("--dut", st_dut,
                         "The DUT family: sim (the reference and its bug profiles), rtl (the RTL DUT and its planted\n"
                         "defines; docs/rtl.md) or so:PATH.so (a DUT library and the bugs it lists in mrct_dut_describe,\n"
                         "each planted with bug=NAME; docs/dut-abi.md)");
    unsigned st_scale = 1;
    selftest->add_option("--time-scale", st_scale,
                         "Also prove coarse time (docs/timing.md): run the fine_timing cases K times slower (K a power of\n"
                         "two) and require each to give its written verdict against the reference and every bug profile")
        ->check(CLI::IsMember({1u, 2u, 4u, 8u, 16u, 32u, 64u, 128u}));

    std::vector<std::string> merge_dirs;
    std::string merge_out;
    auto* report = app.add_subcommand("report", "Work with run outputs");
    auto* merge = report->add_subcommand("merge", "Merge the --out directories of shard runs into one set of reports");
    merge->add_option("dirs", merge_dirs, "Shard output directories")->required()->check(CLI::ExistingDirectory);
    merge->add_option("--out", merge_out, "Directory for the merged reports")->required();
    report->require_subcommand(1);

    std::string docs_what, docs_plan;
    auto* docs = app.add_subcommand("docs", "Print a generated reference section as markdown (docs/fabric.md, bug-profiles.md, assertions.md, clauses.md,\nplan-format.md's tables)");
    docs->add_option("what", docs_what, "fabric (impairment stages), bugs (bug profiles), variants (conforming variants), assertions (the assertion library), clauses (clause table),\n"
                                        "topology and limits (a case's keys: types, defaults), actions (plan actions and their arguments),\n"
                                        "settings (dut:/peer: endpoint settings); the last four are docs/plan-format.md's")
        ->required()
        ->check(CLI::IsMember({"fabric", "bugs", "variants", "assertions", "clauses", "topology", "limits", "actions", "settings"}));
    add_plan_limit(docs);
    docs->add_option("--plan", docs_plan, "With clauses: add the cases of this plan (YAML file, or its folder) citing each clause")
        ->transform(k_plan_path);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // CLI11 prints help/version/errors; its own codes (100+) map to ours.
        return app.exit(e) == 0 ? mrct::app::k_exit_ok : mrct::app::k_exit_usage;
    }
    setup_logging(verbose, quiet);
    for (const auto& l : g_plan_limits)
        if (auto st = mrct::plan::set_limit(mrct::app::plan_limits(), l); !st) {  // checked while parsing
            std::cerr << st.err().message << "\n";
            return mrct::app::k_exit_usage;
        }
    try {
        if (*decode) return mrct::app::run_decode(dec);
        if (*samples) return mrct::app::run_samples(smp);
        if (*simulate) return mrct::app::run_simulate(sim);
        if (*emulate) return mrct::app::run_emulate(em);
        if (*interop) return mrct::app::run_interop(io);
        if (*check) return mrct::app::run_check(ck);
        if (*docs) return mrct::app::run_docs(docs_what, docs_plan);
        if (*run) return mrct::app::run_plan(ra);
        if (*merge) return mrct::app::run_report_merge(merge_dirs, merge_out);
        if (*list) return mrct::app::run_list(list_plan, list_json);
        if (*validate) return mrct::app::run_validate(val_plan);
        if (*explain) {
            if (ex_args.size() == 2) {
                if (auto why = resolve_plan(ex_args[0]); !why.empty()) {
                    std::cerr << "explain: " << why << "\n";
                    return 2;
                }
                return mrct::app::run_explain(ex_args[0], ex_args[1]);
            }
            return mrct::app::run_explain("testplans/metaroce-1.2/plan.yaml", ex_args[0]);
        }
        if (*selftest) return mrct::app::run_selftest(st_plan, st_jobs, st_out, st_scale, st_dut);
    } catch (const std::exception& e) {
        spdlog::error("internal error: {}", e.what());
        return mrct::app::k_exit_infra;
    }
    return mrct::app::k_exit_usage;
}
