// Bringing pages into memory ahead of their first touch.
//
// A page touched for the first time costs a fault. On a VM a fault is an
// exception the hypervisor sees: about 11 us each on this project's VM,
// 11 ms for the 1024 pages of 4 MiB touched one by one, against 0.5-0.8 ms
// to ask the kernel for all of them in one call (docs/performance.md). On a
// real wire those faults land in the middle of the DUT's traffic.
#pragma once

#include <cstddef>

namespace mrct::core {

// Faults in, writable, every whole page inside [p, p + n) with one system
// call (MADV_POPULATE_WRITE); the bytes are left as they are. The partial
// pages at either end are left to their first touch. Kernels before 5.14
// lack the call: then each page is read and written back once. Returns
// false when the kernel had no memory for the pages (the range is then as
// it was, some pages in memory perhaps).
bool make_resident(void* p, std::size_t n);

// Writes each whole page inside [p, p + n) once, a byte back unchanged. On a
// VM that maps a guest's page only when the guest first touches it (shadow
// paging: this project's VM), that first touch costs 4-6 us a page even
// after make_resident; done ahead, the accesses that matter find the page
// mapped. Costs nanoseconds a page where the hardware maps guest memory.
void touch_pages(void* p, std::size_t n);

}  // namespace mrct::core
