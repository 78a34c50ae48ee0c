#pragma once
/// \file
/// `volley search`: the highest load whose runs are error-free and meet a latency target, found
/// by bisection over a range of one profile variable (a rate, a strand count). Pure logic: what
/// to try next from what the runs showed; the runs are the command's (cli/search_command.cpp).
/// Errors are sentences, never exceptions. Thread: any (a value type, one owner).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "volley/analysis/run_metrics.hpp"

namespace volley::analysis {

/// One latency percentile of the timed transaction at or under a bound: "p99<=500us".
struct LatencyTarget {
  Metric percentile = Metric::kP99Ns;  ///< kP50Ns, kP99Ns or kP99_9Ns
  double max_ns = 0;
  std::string text;  ///< as given
};
struct TargetParse {
  std::optional<LatencyTarget> target;
  std::string error;  ///< set when `target` is empty
};
/// "p50<=D", "p99<=D" or "p99.9<=D" with D a duration ("500us", "2ms"); spaces allowed.
[[nodiscard]] TargetParse parse_target(std::string_view text);

/// The variable and the range searched: NAME=LOW..HIGH, positive numbers, LOW below HIGH.
/// Integer bounds search integers only (a strand count); others any number (a rate).
struct SearchRange {
  std::string name;
  double low = 0;
  double high = 0;
  bool integer = true;
};
struct RangeParse {
  std::optional<SearchRange> range;
  std::string error;
};
[[nodiscard]] RangeParse parse_search_range(std::string_view text);

/// Whether one run document met `target`: status ok, no error, and the percentile of its timed
/// transaction at or under the bound. `why` says what it missed ("p99 812us > 500us").
[[nodiscard]] bool run_meets(const nlohmann::json& run, const LatencyTarget& target,
                             std::string& why);

/// The bisection. The low end is tried first (if it misses, no load in the range meets the
/// target), then the high end (if it meets, the capacity is at least that), then the geometric
/// middle of the highest load that met and the lowest that missed, until they are within
/// `precision` (a fraction: 0.02 is 2%) of each other, or adjacent integers. So at most about
/// log2(log(high / low) / precision) + 2 loads are tried. The target is assumed to get harder as
/// the load grows: each load tried lies between the highest that met and the lowest that
/// missed, and its outcome moves one of them.
class CapacitySearch {
 public:
  CapacitySearch(SearchRange range, double precision);
  /// The next load to try, or nullopt when the answer is known.
  [[nodiscard]] std::optional<double> next() const;
  /// What the runs at `load` (the last next()) showed: every repeat met the target, or not.
  void record(double load, bool met);
  /// The highest load seen to meet the target; nullopt when even the low end missed.
  [[nodiscard]] std::optional<double> capacity() const { return met_; }
  /// The lowest load seen to miss; nullopt when even the high end met.
  [[nodiscard]] std::optional<double> missed() const { return missed_; }
  [[nodiscard]] const SearchRange& range() const { return range_; }
  /// `load` as the profile variable's value: an integer without decimals, else up to 6
  /// significant digits.
  [[nodiscard]] std::string text(double load) const;

 private:
  SearchRange range_;
  double precision_;
  std::optional<double> met_;     ///< highest load that met, below missed_
  std::optional<double> missed_;  ///< lowest load that missed
  bool low_tried_ = false;
  bool high_tried_ = false;
};

/// How the capacity moved between two search documents (their "search" objects), judged by the
/// brackets the searches ended with: it moved when the new capacity met a load the base missed,
/// or the base met one the new missed; otherwise the change is within the searches' precision.
struct CapacityChange {
  std::string variable;
  double base = 0;
  double next = 0;
  double change_pct = 0;
  enum class Verdict { kHigher, kLower, kWithinPrecision } verdict = Verdict::kWithinPrecision;
  std::string text;  ///< the lines `volley compare` prints
};
/// Empty when either document is not a search that found a capacity, or they searched
/// different variables; `why` then says which (empty when neither is a search).
[[nodiscard]] std::optional<CapacityChange> compare_capacity(const nlohmann::json& base,
                                                             const nlohmann::json& next,
                                                             std::string& why);

}  // namespace volley::analysis
