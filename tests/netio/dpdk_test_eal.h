// The EAL every DPDK test in dpdk_tests runs with: once per process, so all
// of them must agree (no hugepages, PCI or shared config; needs root, as CI is).
#pragma once

namespace mrct::test {
inline constexpr const char* k_dpdk_test_eal = "--no-huge --no-shconf --no-pci -l 0 -m 256 --log-level=4 --vdev=net_ring0";
}
