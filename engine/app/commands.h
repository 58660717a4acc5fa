#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "run/runner.h"

namespace mrct::app {

// Exit codes shared by every command (docs/cli.md).
inline constexpr int k_exit_ok = 0;
inline constexpr int k_exit_fail = 1;
inline constexpr int k_exit_usage = 2;
inline constexpr int k_exit_infra = 3;

std::string_view version_string();

// PASS, FAIL, INCONCLUSIVE, ERROR, SKIP: a verdict as the progress lines print it.
const char* verdict_mark(assertions::verdict v);

// NAME=VALUE options (--param) as a map; the error names the bad one.
core::result<std::map<std::string, std::string>> name_values(const std::vector<std::string>& given, const std::string& option);

struct decode_args {
    std::string path;
    bool json = false;
    bool payload = false;
    bool no_icrc = false;
    std::uint64_t count = 0;
};
int run_decode(const decode_args& a);

struct samples_args {
    std::string path;
    unsigned random = 0;
    std::uint64_t seed = 1;
    unsigned ip_version = 4;
    std::vector<std::string> opcodes;
};
int run_samples(const samples_args& a);

struct simulate_args {
    std::string config;  // YAML file, optional; command-line options override it
    std::vector<std::string> overrides;  // "key=value" from options, applied after the file
    bool pretty = false;
    bool small_pages = false;  // leave the heap alone (core/heap_pages.h)
};
int run_simulate(const simulate_args& a);

struct emulate_args {
    std::string port_a, port_b;  // interfaces (pcap:IFACE or IFACE) or DPDK ports (dpdk:PORT)
    std::string eal;             // DPDK ports: EAL arguments
    std::string config;          // YAML (docs/emulator.md); none: plain wires
    std::string out;             // folder for captures and emulate.json
    std::string duration, progress = "1s";
    bool no_capture = false;
    bool busy_poll = false;
};
int run_emulate(const emulate_args& a);

struct interop_args {
    std::string a, b, token_a, token_b;
    std::vector<std::string> params;  // NAME=VALUE, configured on both
    unsigned writes = 32, sends = 16, streams = 4, tags = 2;
    std::uint32_t write_size = 65536, send_size = 16384;
    bool no_rnr = false, one_way = false;
    std::string rnr_hold = "5ms", timeout = "30s";
    std::uint64_t seed = 1;
    std::string out;  // JSON summary file
};
int run_interop(const interop_args& a);

struct check_args {
    std::vector<std::string> inputs;  // pcap files, or `mrct emulate --out` folders
    std::vector<std::string> duts;    // addresses to judge (default: every one in the capture / on the port)
    std::vector<std::string> params;  // NAME=VALUE: the parameters in force on the DUTs
    std::string crossing = "200us";
    std::string max_hold = "10ms";    // how long the DUTs' host may have held them (0: they keep their own time)
    std::uint64_t capture_lost = 0;   // frames the capture files' capturer dropped (check::input::lost)
    std::string out;                  // reports folder
};
int run_check(const check_args& a);

// Prints a generated reference section (markdown): "fabric" or "bugs".
// clauses: with `plan`, the cases citing each clause (traceability).
int run_docs(const std::string& what, const std::string& plan = "");

}  // namespace mrct::app

namespace mrct::app {

struct run_args {
    std::string plan;
    std::string dut = "sim";
    std::vector<std::string> filters, clauses;
    std::uint64_t seed = 1;
    unsigned repeat = 1, jobs = 1;
    std::string out;
    std::string capture = "fail";  // all | fail | none: pcaps per case in <out>/pcap
    std::string shard;             // "K/N": a deterministic 1/N slice
    std::string time_scale = "auto";  // auto | K (run/time_scale.h)
    unsigned timing_retries = run::k_timing_retries;  // real time: attempts after a timing-doubted one (D66)
    unsigned max_errors = run::k_max_consecutive_errors;  // stop after this many consecutive errors (0 never)
    bool quiet_progress = false;
    std::string priority = "auto";  // auto | off | nice:N | fifo:N (sim/priority.h, D76)
    // Exit 1 where a case ended inconclusive, as where one failed: a gate
    // that wants every case judged (a lab that voided verdicts, D144/D148).
    bool fail_on_inconclusive = false;
};
int run_plan(const run_args& a);
// The limits every command that reads a plan loads it under (run, list,
// validate, explain, selftest, docs): `--plan-limit NAME=VALUE`.
plan::limits& plan_limits();
int run_list(const std::string& plan, bool json);
// Merges the outputs of shard runs into one set of reports in `out`.
int run_report_merge(const std::vector<std::string>& dirs, const std::string& out);
int run_validate(const std::string& plan);
int run_explain(const std::string& plan, const std::string& case_id);
// The plan against the reference DUT and every bug profile; prints the kill matrix.
// time_scale > 1: the fine_timing cases run that many times slower and must
// give their written verdicts (run/time_scale.h).
int run_selftest(const std::string& plan, unsigned jobs, const std::string& out, unsigned time_scale = 1,
                 const std::string& dut = "sim");

}  // namespace mrct::app
