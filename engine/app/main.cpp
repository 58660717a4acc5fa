// mrct: the command line. The only module that knows every other module.
#include <cstdio>
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "app/commands.h"

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
    auto kv = [&](const char* name, const char* help) {
        std::string key = name;
        simulate->add_option_function<std::string>(std::string("--") + name,
                                                   [&sim, key](const std::string& v) { sim.overrides.push_back(key + "=" + v); },
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
    kv("rate", "Link rate per path and direction (default 100Gbps)");
    kv("delay", "One-way propagation delay per path (default 2us)");
    kv("loss", "Bernoulli loss probability per path, sender to receiver (default 0)");
    kv("path-delay", "PATH:EXTRA one-way delay on one path, e.g. 1:500us (repeatable)");
    kv("fail-path", "PATH:TIME the path fails (blackhole), e.g. 3:2ms (repeatable)");
    kv("bug-sender", "Bug profile of the senders (mrct simulate --help lists none; see docs/bug-profiles.md)");
    kv("bug-receiver", "Bug profile of the receiver");
    kv("inbound-gbps", "Receiver inbound rate shared by grants (default 400)");
    kv("mtu", "Payload bytes per packet (default 4096)");
    kv("receiver-link", "Rate of the receiver's own link shared by all senders, RED ECN marking (default: none)");
    kv("time-limit", "Virtual-time limit (default 10s)");

    std::string docs_what;
    auto* docs = app.add_subcommand("docs", "Print a generated reference section as markdown (docs/fabric.md, docs/bug-profiles.md)");
    docs->add_option("what", docs_what, "fabric (impairment stages and parameters) or bugs (bug profiles)")
        ->required()
        ->check(CLI::IsMember({"fabric", "bugs"}));

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // CLI11 prints help/version/errors; its own codes (100+) map to ours.
        return app.exit(e) == 0 ? mrct::app::k_exit_ok : mrct::app::k_exit_usage;
    }
    setup_logging(verbose, quiet);
    try {
        if (*decode) return mrct::app::run_decode(dec);
        if (*samples) return mrct::app::run_samples(smp);
        if (*simulate) return mrct::app::run_simulate(sim);
        if (*docs) return mrct::app::run_docs(docs_what);
    } catch (const std::exception& e) {
        spdlog::error("internal error: {}", e.what());
        return mrct::app::k_exit_infra;
    }
    return mrct::app::k_exit_usage;
}
