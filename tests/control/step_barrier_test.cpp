// The served side's step barrier on its own: proceed in order and only after the previous step
// is done and drained, end_step and written for the step running, finish after the last step.
#include "volley/control/step_barrier.hpp"

#include <gtest/gtest.h>

namespace volley::control {
namespace {

const auto kNow = StepBarrier::Clock::now();

TEST(StepBarrier, StepsGoInOrderOnceThePreviousIsDoneAndDrained) {
  StepBarrier b(3);
  EXPECT_EQ(b.refuse("proceed", 1), "'proceed' to step 1 out of order (the next step is 0)");
  EXPECT_EQ(b.refuse("proceed", 0), "");
  b.release(0, kNow);
  EXPECT_EQ(b.refuse("proceed", 0), "'proceed' to step 0 out of order (the next step is 1)");
  EXPECT_EQ(b.refuse("proceed", 1),
            "'proceed' to step 1 out of order (the next step is 1, once the previous one is done)");
  b.done(0);
  EXPECT_NE(b.refuse("proceed", 1), "") << "done but not drained";
  b.drained(0);
  EXPECT_EQ(b.refuse("proceed", 1), "");
}

TEST(StepBarrier, AStepMessageNeedsAValidStep) {
  StepBarrier b(2);
  EXPECT_EQ(b.refuse("proceed", std::nullopt), "'proceed' without a valid step (0..1)");
  EXPECT_EQ(b.refuse("end_step", 2), "'end_step' without a valid step (0..1)");
}

TEST(StepBarrier, EndStepAndWrittenConcernTheStepRunning) {
  StepBarrier b(2);
  EXPECT_EQ(b.refuse("end_step", 0), "'end_step' for step 0, which is not the step running");
  EXPECT_EQ(b.refuse("written", 0), "'written' for step 0, which is not the step running");
  b.release(0, kNow);
  EXPECT_EQ(b.refuse("written", 0), "");
  EXPECT_EQ(b.refuse("end_step", 0), "");
  b.end(0);
  EXPECT_EQ(b.refuse("end_step", 0), "'end_step' for step 0, which is not the step running")
      << "ended twice";
  EXPECT_FALSE(b.drain_due(0));
  b.done(0);
  EXPECT_TRUE(b.drain_due(0));
}

TEST(StepBarrier, FinishComesAfterTheLastStepIsDoneAndDrained) {
  StepBarrier b(1);
  EXPECT_EQ(b.refuse_finish(), "'finish' before the last step (1 steps, 0 done)");
  b.release(0, kNow);
  b.done(0);
  EXPECT_NE(b.refuse_finish(), "");
  b.drained(0);
  EXPECT_EQ(b.refuse_finish(), "");
  EXPECT_EQ(StepBarrier(0).refuse_finish(), "");
}

TEST(StepBarrier, RemembersTheStepReleasedAndWhen) {
  StepBarrier b(2);
  EXPECT_FALSE(b.released());
  b.release(0, kNow);
  EXPECT_EQ(b.released(), 0U);
  EXPECT_EQ(b.released_at(), kNow);
  EXPECT_FALSE(b.last_done());
  b.done(0);
  EXPECT_EQ(b.last_done(), 0U);
}

}  // namespace
}  // namespace volley::control
