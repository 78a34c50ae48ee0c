// Cost of the TCP figures: reading TCP_INFO (transport::read_tcp_info) from every connection and
// adding it to a transaction's summary, as a worker does at each interval's end and each
// transaction's end. Over N open loopback connections (Arg); the time per iteration is one sweep
// of all of them, so at 1 s intervals it is that much of one core per second.
#include <benchmark/benchmark.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <memory>
#include <vector>

#include "volley/stats/tcp_summary.hpp"
#include "volley/transport/tcp_info.hpp"

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

void BM_TcpInfoSweep(benchmark::State& state) {
  asio::io_context context;
  tcp::acceptor listener(context, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  listener.listen(4096);
  std::vector<std::unique_ptr<tcp::socket>> clients;
  std::vector<tcp::socket> servers;
  for (std::int64_t i = 0; i < state.range(0); ++i) {
    clients.push_back(std::make_unique<tcp::socket>(context));
    clients.back()->connect(listener.local_endpoint());
    servers.push_back(listener.accept());
  }
  for (auto _ : state) {
    volley::stats::TcpSummary summary;
    for (const auto& c : clients) {
      if (const auto r = volley::transport::read_tcp_info(c->native_handle())) summary.add(*r);
    }
    benchmark::DoNotOptimize(summary.connections());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_TcpInfoSweep)->Arg(256)->Arg(4096)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
