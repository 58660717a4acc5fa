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

// Asks the kernel for 2 MiB pages for [p, p + n) (MADV_HUGEPAGE), before
// its pages are first touched: with transparent huge pages in "madvise" mode
// (Debian's default) a region is otherwise faulted in 4 KiB at a time. On
// this project's VM 8 MiB populated and touched took 0.5 ms so, against
// 7.5-15 ms. Only the aligned 2 MiB stretches inside can be huge; a kernel
// without THP refuses, and nothing changes. Returns whether it was taken.
// Beware on a real-time path: the advice enrols the process with khugepaged
// (nice 19), which holds its memory map while it collapses pages; beside a
// CPU-bound load that held mrct-refnic 2.5 s (D128). Memory regions are not
// advised for that reason; mrct-refnic's heap only with --huge-pages.
bool prefer_huge_pages(void* p, std::size_t n);

// Takes this process out of transparent huge pages (PR_SET_THP_DISABLE),
// khugepaged's scans included: where THP is "always" (the default of some
// distributions) every process's memory is khugepaged's to collapse, and it
// held mrct-refnic 2.5 s beside a CPU-bound load (D128). For processes on a
// real-time path (mrct-refnic unless --huge-pages, the engine in a
// real-time case). Returns whether the kernel took it (Linux 3.15 on).
bool no_transparent_huge_pages();

// Writes each whole page inside [p, p + n) once, a byte back unchanged. On a
// VM that maps a guest's page only when the guest first touches it (shadow
// paging: this project's VM), that first touch costs 4-6 us a page even
// after make_resident; done ahead, the accesses that matter find the page
// mapped. Costs nanoseconds a page where the hardware maps guest memory.
void touch_pages(void* p, std::size_t n);

}  // namespace mrct::core
