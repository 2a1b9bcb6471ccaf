// The hold-reason names heftd's status prints (host/src/status.cpp keeps its own table so that
// heft_host_io and heftctl need not link the estimator) are the estimator's bits. Fails when a
// HoldReason is added or renumbered without the table.
#include <gtest/gtest.h>

#include "heft/estimator/sample_mapping.hpp"
#include "heft/host/status.hpp"

namespace heft::host {
namespace {

TEST(Status, HoldReasonNamesMatchTheEstimator) {
  EXPECT_EQ(HoldReasonNames(estimator::kHoldEncoders), std::vector<std::string>{"encoders"});
  EXPECT_EQ(HoldReasonNames(estimator::kHoldTorques), std::vector<std::string>{"torques"});
  EXPECT_EQ(HoldReasonNames(estimator::kHoldBase), std::vector<std::string>{"base"});
  EXPECT_EQ(HoldReasonNames(estimator::kHoldHistory), std::vector<std::string>{"history"});
  EXPECT_EQ(HoldReasonNames(estimator::kHoldNonFinite), std::vector<std::string>{"non_finite"});
  EXPECT_EQ(HoldReasonNames(estimator::kHoldGated), std::vector<std::string>{"gated"});
  EXPECT_EQ(HoldReasonNames(1U << 9), std::vector<std::string>{"bit9"});
}

}  // namespace
}  // namespace heft::host
