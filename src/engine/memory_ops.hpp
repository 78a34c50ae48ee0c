#pragma once
// The executor of the tests' in-memory connections (transport/memory_connection.hpp): a byte
// stream with nothing of its own, made by EngineConfig::connect_in_memory rather than a connect.
#include "volley/transport/memory_connection.hpp"
#include "stream_ops.hpp"

namespace volley::engine {

struct MemoryOps : StreamOps {
  using Link = transport::MemoryConnection;
};

}  // namespace volley::engine
