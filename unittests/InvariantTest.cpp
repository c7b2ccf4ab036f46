// A compiler invariant broken on purpose: the check fires in this build (NDEBUG, as in every
// build type) and the tools end with exit status 2 and an internal-error message.
#include "TestUtil.h"
#include "dataflow/SectionUtil.h"

#include "shardc/dataflow/Sections.h"
#include "shardc/ir/IR.h"
#include "shardc/support/Error.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

namespace shardc {
namespace {

// %a -> %b -> %c, with %a and %c forged into one fusion group that %b, outside it, sits
// between: no order keeps the group together.
void scheduleNonConvexGroup() {
  auto m = testing::parseIR(R"(
func @f(input %x: f32[4]) -> (r: f32[4]) {
  %a = exp(%x) : f32[4]
  %b = neg(%a) : f32[4]
  %c = add(%a, %b) : f32[4]
  return %c
}
)");
  Function& f = *m->functions()[0];
  scheduleByPhase(f, std::vector<Phase>(3, Phase::Forward), {{0, 2}});
}

TEST(InvariantDeathTest, ForgedNonConvexFusionGroupExitsWithStatusTwo) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        try {
          scheduleNonConvexGroup();
        } catch (const std::exception& e) {
          Failure f = failureOf(e); // as shardc and shardc-opt end
          std::cerr << "shardc: error: " << f.message << "\n";
          std::exit(f.status);
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(2), "shardc: error: internal error: fusion groups must be convex");
}

TEST(InvariantTest, FailuresTellUserErrorsFromBugs) {
  EXPECT_EQ(failureOf(Error("bad file")).status, 1);
  EXPECT_EQ(failureOf(InternalError("broken")).status, 2);
  EXPECT_EQ(failureOf(std::bad_alloc()).message, "out of memory");
  Failure other = failureOf(std::out_of_range("map::at"));
  EXPECT_EQ(other.status, 2);
  EXPECT_EQ(other.message, "internal error: map::at");
}

} // namespace
} // namespace shardc
