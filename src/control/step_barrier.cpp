#include "volley/control/step_barrier.hpp"

#include <fmt/format.h>

namespace volley::control {

std::string StepBarrier::refuse(const std::string& type, std::optional<std::uint64_t> step) const {
  if (!step || *step >= steps_) {
    return fmt::format("'{}' without a valid step (0..{})", type, steps_ == 0 ? 0 : steps_ - 1);
  }
  const auto k = static_cast<std::size_t>(*step);
  if (type == "proceed") {
    const bool previous_done =
        k == 0 || (done_ && *done_ + 1 == k && drained_ && *drained_ + 1 == k);
    if (k == next_release_ && previous_done) return {};
    return fmt::format("'proceed' to step {} out of order (the next step is {}{})", k,
                       next_release_, k == next_release_ ? ", once the previous one is done" : "");
  }
  if (type == "end_step") {
    if (released_ == k && !(ended_ && *ended_ >= k)) return {};
    return fmt::format("'end_step' for step {}, which is not the step running", k);
  }
  if (released_ == k) return {};
  return fmt::format("'{}' for step {}, which is not the step running", type, k);
}

std::string StepBarrier::refuse_finish() const {
  if (steps_ == 0 || (done_ == steps_ - 1 && drained_ == steps_ - 1)) return {};
  return fmt::format("'finish' before the last step ({} steps, {} done)", steps_,
                     done_ ? *done_ + 1 : 0);
}

void StepBarrier::release(std::size_t step, Clock::time_point at) {
  next_release_ = step + 1;
  released_ = step;
  released_at_ = at;
}

}  // namespace volley::control
