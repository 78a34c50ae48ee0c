#pragma once
// This process's resident memory, for what a run's strands, connections and buffers cost it.
#include <cstdint>

namespace volley::sampling {

/// Resident set size of this process in bytes (/proc/self/statm), 0 if unreadable, after the
/// allocator has returned its free pages (malloc_trim): memory held, not memory cached.
std::int64_t resident_bytes();

}  // namespace volley::sampling
