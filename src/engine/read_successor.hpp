#pragma once
// The prefetch for a worker's next resumed read. At thousands of connections a round trip's state
// (the strand, its connection, its coroutine frame, the read's operation and the event loop's
// state for the socket) has left the cache by the time its answer comes. The order in which a
// worker's reads complete repeats round after round (the peer answers in the order it was
// asked), so each strand keeps where the state of the strand resumed after it last time lies,
// and prefetches it when its own read completes: its own work covers the fetch.
// Thread: the strand's worker.
#include "strand_core.hpp"
#include "volley/transport/resuming_io.hpp"

namespace volley::engine {

/// Strand `s`'s resuming read on `c` completed (`got`): records `s` as the successor of the
/// strand resumed before it, and prefetches the state of its own successor. `link_state`: the
/// event loop's state for `c`'s socket (Asio's descriptor_state), or nullptr when it has none
/// (a connection on the io_uring engine). `frame`: an address in the strand's coroutine frame.
/// Nothing below a few hundred strands on the worker, whose state stays in the cache.
void prefetch_successor(StrandCore& s, StrandConnection& c, const void* link_state,
                        const void* frame, const transport::IoDone& got);

}  // namespace volley::engine
