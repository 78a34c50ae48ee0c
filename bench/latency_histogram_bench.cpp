// Cost of the LatencyHistogram hot path (record) and of the control-thread operations (merge,
// percentile). Values come from a precomputed array so the RNG is not measured.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "volley/stats/latency_histogram.hpp"

namespace {

using volley::stats::LatencyHistogram;

// 64 Ki log-uniform latencies between 1 us and 10 ms (a typical request/response spread).
std::vector<std::uint64_t> make_values() {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> exponent(3.0, 7.0);
  std::vector<std::uint64_t> values(std::size_t{1} << 16);
  for (auto& v : values) v = static_cast<std::uint64_t>(std::pow(10.0, exponent(rng)));
  return values;
}

void BM_Record(benchmark::State& state) {
  const auto values = make_values();
  const std::size_t mask = values.size() - 1;
  LatencyHistogram h;
  std::size_t i = 0;
  for (auto _ : state) {
    h.record(values[i++ & mask]);
  }
  benchmark::DoNotOptimize(h.count());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Record);

// The same value every time: the best case (one hot bucket), for comparison.
void BM_RecordConstant(benchmark::State& state) {
  LatencyHistogram h;
  std::uint64_t v = 123'456;
  for (auto _ : state) {
    benchmark::DoNotOptimize(v);
    h.record(v);
  }
  benchmark::DoNotOptimize(h.count());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RecordConstant);

void BM_Merge(benchmark::State& state) {
  const auto values = make_values();
  LatencyHistogram source;
  for (const auto v : values) source.record(v);
  LatencyHistogram target;
  for (auto _ : state) {
    target.merge(source);
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(target.count());
}
BENCHMARK(BM_Merge);

void BM_Percentile(benchmark::State& state) {
  const auto values = make_values();
  LatencyHistogram h;
  for (const auto v : values) h.record(v);
  const double p = static_cast<double>(state.range(0)) / 10.0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(h.percentile(p));
  }
}
BENCHMARK(BM_Percentile)->Arg(500)->Arg(990)->Arg(999);

void BM_SparseExport(benchmark::State& state) {
  const auto values = make_values();
  LatencyHistogram h;
  for (const auto v : values) h.record(v);
  for (auto _ : state) {
    benchmark::DoNotOptimize(h.sparse_buckets());
  }
}
BENCHMARK(BM_SparseExport);

}  // namespace

BENCHMARK_MAIN();
