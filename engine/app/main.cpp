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
    } catch (const std::exception& e) {
        spdlog::error("internal error: {}", e.what());
        return mrct::app::k_exit_infra;
    }
    return mrct::app::k_exit_usage;
}
