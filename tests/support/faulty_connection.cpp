#include "support/faulty_connection.hpp"

namespace volley::test {

FaultyConnections FaultyConnections::failing_on(std::uint64_t call,
                                                boost::system::error_code error) {
  FaultyConnections f;
  f.script.fail_on_call = call;
  f.script.error = error;
  return f;
}

FaultyConnections FaultyConnections::never_ready() {
  FaultyConnections f;
  f.script.would_block_every = 1;
  f.script.never_ready = true;
  return f;
}

void FaultyConnections::install(engine::EngineConfig& config) const {
  config.connect_in_memory = [script = script, tally = tally](
                                 const boost::asio::any_io_executor& executor,
                                 const transport::ConnectionHeader&) {
    return transport::MemoryConnection(executor, script, tally);
  };
}

}  // namespace volley::test
