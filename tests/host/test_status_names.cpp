// The hold-reason names heftd's status prints (plugin/host/status.cpp keeps its own table so that
// heft_host_io and heftctl need not link the estimator) are the estimator's bits. Fails when a
// HoldReason is added or renumbered without the table.
#include <gtest/gtest.h>

#include "heft/estimator/sample_mapping.hpp"
#include "status.hpp"

namespace heft::host {
namespace {

TEST(Status, HoldReasonNamesMatchTheEstimator) {
  EXPECT_EQ(HoldReasonNames(est::kHoldEncoders), std::vector<std::string>{"encoders"});
  EXPECT_EQ(HoldReasonNames(est::kHoldTorques), std::vector<std::string>{"torques"});
  EXPECT_EQ(HoldReasonNames(est::kHoldBase), std::vector<std::string>{"base"});
  EXPECT_EQ(HoldReasonNames(est::kHoldHistory), std::vector<std::string>{"history"});
  EXPECT_EQ(HoldReasonNames(est::kHoldNonFinite), std::vector<std::string>{"non_finite"});
  EXPECT_EQ(HoldReasonNames(1U << 9), std::vector<std::string>{"bit9"});
}

}  // namespace
}  // namespace heft::host
