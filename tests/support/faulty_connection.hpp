#pragma once
// Connections without sockets for the engine's tests: every connect of a run gets an in-memory
// connection (transport::MemoryConnection) whose peer follows one FaultScript, as Boost.Beast's
// test::stream follows its fail count. Drives EAGAIN, partial transfers, resets, end of file,
// cancellation and timeout= through the strand's real loop.
#include <cstdint>
#include <memory>

#include <boost/system/error_code.hpp>

#include "volley/engine/engine.hpp"
#include "volley/transport/memory_connection.hpp"

namespace volley::test {

struct FaultyConnections {
  transport::FaultScript script;
  /// Shared by every connection the run makes (the tests use one strand and one connection).
  std::shared_ptr<transport::FaultTally> tally = std::make_shared<transport::FaultTally>();

  /// The Nth call (1-based) fails with `error`.
  static FaultyConnections failing_on(std::uint64_t call, boost::system::error_code error);
  /// Every call would block, and no wait completes until cancelled.
  static FaultyConnections never_ready();

  /// Makes every connect of `config`'s engine one of these connections.
  void install(engine::EngineConfig& config) const;
};

}  // namespace volley::test
