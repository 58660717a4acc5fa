#include "wire/crc32.h"

#include <algorithm>

#include <isa-l/crc.h>
#include <zlib.h>

namespace mrct::wire {

std::uint32_t crc32_zlib(std::uint32_t crc, core::bytes_view data) {
    // zlib takes uInt lengths; feed large inputs in chunks.
    uLong c = crc;
    while (!data.empty()) {
        auto n = static_cast<uInt>(std::min<std::size_t>(data.size(), 1u << 30));
        c = ::crc32(c, data.data(), n);
        data = data.subspan(n);
    }
    return static_cast<std::uint32_t>(c);
}

std::uint32_t crc32_isal(std::uint32_t crc, core::bytes_view data) {
    return ::crc32_gzip_refl(crc, data.data(), data.size());
}

#if defined(MRCT_CRC_BACKEND_ZLIB)
std::uint32_t crc32_update(std::uint32_t crc, core::bytes_view data) { return crc32_zlib(crc, data); }
const char* crc32_backend_name() { return "zlib"; }
#else
std::uint32_t crc32_update(std::uint32_t crc, core::bytes_view data) { return crc32_isal(crc, data); }
const char* crc32_backend_name() { return "isa-l"; }
#endif

}  // namespace mrct::wire
