#include "read_successor.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>

#include "worker.hpp"

namespace volley::engine {

namespace {

/// Asks for the cache lines of [address, address + Bytes) ahead of use, unrolled (a fixed
/// number of prefetch instructions, no loop). A hint: an address that is stale (a strand's
/// connection or frame that went away) costs a wasted fetch, never a fault.
template <std::size_t Bytes>
void prefetch(const void* address) {
  // Addresses computed as integers on purpose: a prefetch only needs the cache line.
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  [&]<std::size_t... Line>(std::index_sequence<Line...>) {
    // NOLINTNEXTLINE(performance-no-int-to-ptr)
    (__builtin_prefetch(reinterpret_cast<const void*>(at + Line * 64)), ...);
  }
  (std::make_index_sequence<(Bytes + 63) / 64>());
  // Its last line. NOLINTNEXTLINE(performance-no-int-to-ptr)
  __builtin_prefetch(reinterpret_cast<const void*>(at + Bytes - 1));
}

/// Below this many strands on a worker their state stays in the cache (about 2 KiB each, against
/// a 1 MiB second level), and the prefetch would only cost its ~60 instructions.
constexpr std::size_t kPrefetchFromStrands = 256;

}  // namespace

void prefetch_successor(StrandCore& s, StrandConnection& c, const void* link_state,
                        const void* frame, const transport::IoDone& got) {
  if (s.worker_.strand_count() < kPrefetchFromStrands) return;
  if (StrandCore* before = s.worker_.exchange_last_resumed(&s); before != nullptr && before != &s) {
    before->successor_ = {&s, &c, link_state, frame, got.op, got.entry_frame};
  }
  const StrandCore::Successor& next = s.successor_;
  if (next.strand == nullptr) return;
  // The spans: the strand's fields touched per operation (its first lines), a connection,
  // Asio 1.81's descriptor_state (168 bytes), the read's operation and the coroutine's entry frame
  // (each under 192), and the whole frame of Strand::run. GCC 12 allocates that frame in one block
  // (672 bytes: the constant run()'s ramp passes to awaitable_frame_base::operator new) and puts
  // the step's TxnLoop, whose address is `frame`, 248 bytes into it; the locals and temporaries a
  // round trip touches lie all over it (perf annotate at 1,024 connections), so the window covers
  // the whole frame. perf still samples loads at those offsets; without hardware counters this VM
  // cannot tell whether they miss or the samples skid. To check the window after run() changes:
  // objdump the ramp's frame size and the offset of the `frame` argument at the call of
  // Strand::resume_op in run()'s actor.
  constexpr std::size_t kAsioState = 192;
  constexpr std::uintptr_t kFrameBefore = 256;
  constexpr std::size_t kFrameBytes = 704;
  prefetch<160>(next.strand);
  prefetch<sizeof(StrandConnection)>(next.connection);
  if (next.link_state != nullptr) prefetch<kAsioState>(next.link_state);
  prefetch<kAsioState>(next.read_op);
  prefetch<kAsioState>(next.entry_frame);
  prefetch<kFrameBytes>(reinterpret_cast<const void*>(  // NOLINT(performance-no-int-to-ptr)
      reinterpret_cast<std::uintptr_t>(next.frame) - kFrameBefore));
}

}  // namespace volley::engine
