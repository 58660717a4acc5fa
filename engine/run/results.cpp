// Atomic file writing for the run's outputs (the writers themselves: reports/).
#include <filesystem>
#include <fstream>

#include "run/runner.h"

namespace mrct::run {

core::status write_file_atomic(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f) return core::error{"cannot write " + tmp};
        f << text;
        f.flush();
        if (!f) return core::error{"write failed: " + tmp};
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) return core::error{"cannot rename " + tmp + " to " + path + ": " + ec.message()};
    return core::ok_status();
}

}  // namespace mrct::run
