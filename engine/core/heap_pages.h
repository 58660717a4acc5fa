// Transparent huge pages for a process's main heap: a single-threaded
// simulation (`mrct simulate`), and mrct-refnic --huge-pages, whose agent takes 4 MiB
// posts into fresh heap memory (each 4 KiB page faulted in for ~16 us on
// this project's VM, on its data path's thread).
//
// The 64-sender incast touches ~70 MB spread over every sender's connection,
// fabric path, packet buffers and receive region; with 4 KiB pages most of
// its cost is cache and TLB misses (docs/performance.md). On a kernel whose
// THP mode is `madvise` (Debian's default), memory gets 2 MiB pages only where
// the process asks. heap_on_huge_pages() asks for the main heap: allocations
// up to 64 MiB are served from it (not from separate mmaps), it is grown once
// by 1 GiB of address space (not of memory: pages are only backed when
// touched), and that whole range is advised MADV_HUGEPAGE.
//
// Process-wide and for the main thread's heap only (other threads allocate
// from their own arenas), so it is used by `simulate` and mrct-refnic (one
// thread) alone. Virtual-time
// results do not depend on it: runs are identical, only faster.
#pragma once

#include <string>

namespace mrct::core {

// Returns what was done, for the debug log ("heap of 1024 MiB advised ...")
// or why not (no [heap] mapping, madvise refused).
std::string heap_on_huge_pages();

}  // namespace mrct::core
