#pragma once
// The served side's step barrier: where a run stands in its steps, and whether the controller's
// step messages fit it. Step k starts (`proceed`) only once every local strand finished step k-1
// and its end-of-step drain is over; `end_step` and `written` concern the step running; `finish`
// comes after the last step is done and drained (docs/control-protocol.md, "The end of a step").
// Plain state, no I/O: the session asks it, then acts.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace volley::control {

class StepBarrier {
 public:
  using Clock = std::chrono::steady_clock;
  explicit StepBarrier(std::size_t steps) : steps_(steps) {}

  /// Why the controller's `type` message for `step` (absent or not a number: nullopt) does not
  /// fit the barrier now, or "". `type` is "proceed", "end_step" or "written".
  [[nodiscard]] std::string refuse(const std::string& type,
                                   std::optional<std::uint64_t> step) const;
  /// Why `finish` does not fit (the last step is not done and drained), or "".
  [[nodiscard]] std::string refuse_finish() const;

  void release(std::size_t step, Clock::time_point at);
  void end(std::size_t step) { ended_ = step; }
  void done(std::size_t step) { done_ = step; }
  void drained(std::size_t step) { drained_ = step; }

  /// Step `step` is both ended by the controller and finished by every local strand: its drain
  /// starts now.
  [[nodiscard]] bool drain_due(std::size_t step) const { return ended_ == step && done_ == step; }
  /// The step released last, and when (the one a stop cuts short, if it is not done).
  [[nodiscard]] std::optional<std::size_t> released() const { return released_; }
  [[nodiscard]] Clock::time_point released_at() const { return released_at_; }
  /// The last step every local strand finished.
  [[nodiscard]] std::optional<std::size_t> last_done() const { return done_; }
  [[nodiscard]] std::size_t steps() const { return steps_; }

 private:
  std::size_t steps_;
  std::size_t next_release_ = 0;
  std::optional<std::size_t> released_;
  Clock::time_point released_at_{};
  std::optional<std::size_t> ended_;
  std::optional<std::size_t> done_;
  std::optional<std::size_t> drained_;
};

}  // namespace volley::control
