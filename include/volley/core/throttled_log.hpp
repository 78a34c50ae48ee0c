#pragma once
// Log lines for events a peer can cause by the thousand (data connections closed for a late header
// or a wrong token): the first goes out at once, later ones at most one per interval, each saying
// how many were left out since the last, so 10,000 connections from an attacker cost a few lines,
// not 10,000, and the operator still learns that they happened and how many.
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace volley::core {

class ThrottledLog {
 public:
  using Clock = std::chrono::steady_clock;
  /// `what` names the events in a summary line, e.g. "data connections closed".
  ThrottledLog(std::function<void(const std::string&)> sink, Clock::duration interval,
               std::string what)
      : sink_(std::move(sink)), interval_(interval), what_(std::move(what)) {}
  /// Logs `line` unless a line went out less than `interval` before `now`; then counts it.
  /// Returns true when it was left out (then a later add(), flush_due() or flush() says so).
  /// Any thread.
  bool add(const std::string& line, Clock::time_point now = Clock::now()) {
    std::string out;
    {
      std::lock_guard lock(mutex_);
      ++total_;
      if (logged_ && now - last_logged_ < interval_) {
        ++left_out_;
        last_left_out_ = line;
        return true;
      }
      out = left_out_ == 0 ? line
                           : fmt::format("{} (and {} more {} since the last such line)", line,
                                         left_out_, what_);
      logged_ = true;
      last_logged_ = now;
      left_out_ = 0;
      last_left_out_.clear();
    }
    // Outside the lock: the sink may be slow (a terminal) and must not hold up other threads.
    if (sink_) sink_(out);
    return false;
  }
  /// Like flush(), but only once `interval` has passed since the last line went out, and it
  /// counts as a line: a timer calls it, so that a count left out reaches the log within an
  /// interval even when no event follows, and still at most one line an interval. While some
  /// are left out and it is too early, returns when it will be time.
  std::optional<Clock::time_point> flush_due(Clock::time_point now = Clock::now()) {
    std::string out;
    {
      std::lock_guard lock(mutex_);
      if (left_out_ == 0) return std::nullopt;
      if (now - last_logged_ < interval_) return last_logged_ + interval_;
      out = summary();
      last_logged_ = now;
    }
    if (sink_) sink_(out);
    return std::nullopt;
  }
  /// Events added since construction, logged or left out.
  [[nodiscard]] std::uint64_t total() const {
    std::lock_guard lock(mutex_);
    return total_;
  }
  /// Logs how many lines were left out since the last one went out, if any, and the last of them
  /// (or just that line, when one was left out).
  void flush() {
    std::string out;
    {
      std::lock_guard lock(mutex_);
      if (left_out_ == 0) return;
      out = summary();
    }
    if (sink_) sink_(out);
  }

 private:
  /// The line that counts those left out, which it resets; just that line when one was (a
  /// single refused master reads as it happened, only later). Under the lock.
  std::string summary() {
    std::string out = left_out_ == 1
                          ? last_left_out_
                          : fmt::format("{} more {} since the last such line; the last: {}",
                                        left_out_, what_, last_left_out_);
    left_out_ = 0;
    last_left_out_.clear();
    return out;
  }

  std::function<void(const std::string&)> sink_;
  Clock::duration interval_;
  std::string what_;
  mutable std::mutex mutex_;
  bool logged_ = false;  ///< a line went out, at last_logged_
  Clock::time_point last_logged_;
  std::uint64_t left_out_ = 0;
  std::uint64_t total_ = 0;
  std::string last_left_out_;
};

}  // namespace volley::core
