// A DUT library's entry points (abi/mrct_dut.h): resolved from the shared
// object in this process (open_library), or trampolines into a child process
// that hosts it (isolate=process, so_remote.cpp). so_dut checks whatever
// either hands back.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "dut_adapters/abi/mrct_dut.h"
#include "dut_adapters/dut.h"

namespace mrct::dut {

// The library's entry points, resolved once per path and kept loaded for the
// life of the process (instances of every case share them).
struct so_library {
    std::string path;
    void* handle = nullptr;
#define MRCT_SO_FN(name) decltype(&::name) name = nullptr;
    MRCT_SO_FN(mrct_dut_abi_version)
    MRCT_SO_FN(mrct_dut_describe)
    MRCT_SO_FN(mrct_dut_create)
    MRCT_SO_FN(mrct_dut_destroy)
    MRCT_SO_FN(mrct_dut_last_error)
    MRCT_SO_FN(mrct_dut_configure)
    MRCT_SO_FN(mrct_dut_start)
    MRCT_SO_FN(mrct_dut_advance)
    MRCT_SO_FN(mrct_dut_next_time)
    MRCT_SO_FN(mrct_dut_receive)
    MRCT_SO_FN(mrct_dut_listen)
    MRCT_SO_FN(mrct_dut_connect)
    MRCT_SO_FN(mrct_dut_status)
    MRCT_SO_FN(mrct_dut_accepted)
    MRCT_SO_FN(mrct_dut_close)
    MRCT_SO_FN(mrct_dut_register_mr)
    MRCT_SO_FN(mrct_dut_post_recv)
    MRCT_SO_FN(mrct_dut_post_write)
    MRCT_SO_FN(mrct_dut_post_send)
    MRCT_SO_FN(mrct_dut_poll)
    MRCT_SO_FN(mrct_dut_read_mem)
    MRCT_SO_FN(mrct_dut_counters)
#undef MRCT_SO_FN
    info described;  // name, version, capabilities
    std::vector<so_bug> bugs;
    // Isolated: why the child hosting the instance is gone (it died, or
    // hung and was killed), or nullptr while it serves. Null in-process.
    const char* (*dead)(mrct_dut*) = nullptr;
    // Isolated: the time the i-th completion the last mrct_dut_poll handed
    // over was polled at: the child polls after each call given a time, so
    // a completion is checked against that call's time, not the engine's
    // later poll. Null in-process (the poll's own now).
    mrct_time_ns (*polled_time)(mrct_dut*, std::size_t i) = nullptr;
    // Isolated: makes an instance in a new child (instead of mrct_dut_create),
    // with the instance's own options (library options, call_limit).
    std::function<mrct_dut*(const so_options&, const mrct_dut_host*, char* err, std::size_t cap)> create;
};

// Loads a library in this process (once per path; kept loaded), checking its
// version, every symbol and what mrct_dut_describe says.
core::result<std::shared_ptr<so_library>> open_library(const std::string& path);

// Text from a library, made safe for reports: bounded, every byte that is not
// printable ASCII escaped as \xNN.
std::string safe_text(const char* s, std::size_t limit = 4096);

// isolate=process: the library's functions as trampolines into a child
// process (mrct-dut-host) per instance; this process never loads the library.
// Its description comes from a first child, once per path.
core::result<std::shared_ptr<so_library>> remote_library(const so_options& o);

// The child's side (mrct-dut-host): loads the library, says hello with its
// description (or why it could not), then serves one instance over `fd`
// until the engine closes it or destroys the instance.
int host_main(int fd, const std::string& path);
int serve_instance(int fd, const so_library& lib);

}  // namespace mrct::dut


