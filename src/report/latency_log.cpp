#include "volley/report/latency_log.hpp"

#include <fmt/format.h>

#include <ostream>
#include <string>

#include "volley/report/csv_report.hpp"
#include "volley/stats/latency_histogram.hpp"

namespace volley::report {
namespace {

/// Where a histogram belongs: the first six columns, already quoted.
struct RowKey {
  std::string interval;
  std::string side;
  std::string host;
  std::string group;
  std::string transaction;
  std::string flowop;
};

void write_histogram(const RowKey& key, const stats::LatencyHistogram& h, std::ostream& out) {
  for (const auto& [index, count] : h.sparse_buckets()) {
    out << fmt::format("{},{},{},{},{},{},{},{},{}\n", key.interval, key.side, key.host, key.group,
                       key.transaction, key.flowop, stats::LatencyHistogram::bucket_lower(index),
                       stats::LatencyHistogram::bucket_upper(index), count);
  }
}

void write_side(const SideReport& side, std::ostream& out) {
  RowKey key{"all", csv_field(side.role), csv_field(side.host), {}, {}, {}};
  for (const auto& g : side.result.groups) {
    key.group = csv_field(g.name);
    for (const auto& t : g.transactions) {
      key.transaction = csv_field(t.name);
      key.flowop.clear();
      write_histogram(key, t.stats.latency, out);
      if (t.uncorrected_latency) {
        key.flowop = "uncorrected";
        write_histogram(key, *t.uncorrected_latency, out);
      }
      for (std::size_t f = 0; f < t.flowops.size(); ++f) {
        key.flowop = csv_field(fmt::format("{}:{}", f, t.flowops[f].type));
        write_histogram(key, t.flowops[f].stats.latency, out);
      }
    }
  }
}

}  // namespace

void write_latency_log_header(std::ostream& out) {
  out << "# volley latency log, schema 2: the latency histograms of one run.\n"
         "# One row per non-empty bucket; every value v counted in a row has\n"
         "# bucket_lower_ns <= v <= bucket_upper_ns (the top bucket's upper bound is 2^64-1).\n"
         "# interval: the 0-based index of an interval of the master's time series (the\n"
         "#   master's histograms of that interval), or 'all' (the merged whole run, per side).\n"
         "# side: master or slave; host: master, or the slave's host as in the profile.\n"
         "# flowop: empty = the transaction's latency per iteration (from the intended start\n"
         "#   when paced); uncorrected = a paced transaction's latency from the actual start;\n"
         "#   <index>:<type> = one flowop (0-based index within the transaction).\n"
         "# Buckets: log-linear, 1 ns wide below 256 ns, then 128 per power of two.\n";
  out << kLatencyLogHeader << '\n';
}

void write_interval_histograms(const RunReport& report, std::size_t index,
                               const std::vector<results::SlotStats>& slots, std::ostream& out) {
  RowKey key{std::to_string(index), "master", "master", {}, {}, {}};
  const std::size_t n = std::min(report.slot_names.size(), slots.size());
  for (std::size_t i = 0; i < n; ++i) {
    const SlotName& name = report.slot_names[i];
    // Slot names are "group/transaction" plus "/type" for a flowop, "/uncorrected" for a paced
    // transaction's second histogram.
    std::string_view rest = name.name;
    const std::size_t slash = rest.find('/');
    key.group = csv_field(rest.substr(0, slash));
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    if (name.flowop || name.uncorrected) {
      const std::size_t last = rest.rfind('/');
      key.flowop = name.uncorrected
                       ? std::string("uncorrected")
                       : csv_field(fmt::format("{}:{}", *name.flowop, rest.substr(last + 1)));
      rest = rest.substr(0, last);
    } else {
      key.flowop.clear();
    }
    key.transaction = csv_field(rest);
    write_histogram(key, slots[i].latency, out);
  }
}

void write_run_histograms(const RunReport& report, std::ostream& out) {
  write_side(report.master, out);
  for (const SideReport& s : report.slaves) {
    if (s.missing.empty()) write_side(s, out);
  }
}

void write_latency_log(const RunReport& report, std::ostream& out) {
  write_latency_log_header(out);
  write_run_histograms(report, out);
}

}  // namespace volley::report
