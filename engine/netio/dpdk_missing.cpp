// agent+dpdk when the build found no libdpdk.
#include "netio/port.h"

namespace mrct::netio {

core::result<std::unique_ptr<port>> make_dpdk_port(boost::asio::io_context&, const dpdk_options&) {
    return core::error{"this mrct was built without DPDK (libdpdk-dev not found)"};
}

core::result<std::unique_ptr<port>> make_dpdk_tap_port(boost::asio::io_context&, const dpdk_options&) {
    return core::error{"this mrct was built without DPDK (libdpdk-dev not found)"};
}

}  // namespace mrct::netio
