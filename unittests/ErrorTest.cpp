#include "shardc/support/Error.h"

#include <gtest/gtest.h>

#include <string>

namespace shardc {
namespace {

// Built with NDEBUG like every build type: the check must still fire.
TEST(ErrorTest, CheckFiresInEveryBuildType) {
#ifndef NDEBUG
  GTEST_SKIP() << "this build keeps assert() too; the point is a build that does not";
#endif
  int line = __LINE__ + 2;
  try {
    SHARDC_CHECK(1 + 1 == 3, "arithmetic broke");
    FAIL() << "SHARDC_CHECK did not throw";
  } catch (const InternalError& e) {
    EXPECT_EQ(std::string(e.what()), "internal error: arithmetic broke (ErrorTest.cpp:" +
                                         std::to_string(line) + ": 1 + 1 == 3)");
  }
  EXPECT_NO_THROW(SHARDC_CHECK(1 + 1 == 2, "never said"));
}

TEST(ErrorTest, InternalErrorsAreErrorsTellableByType) {
  try {
    throw InternalError("x");
  } catch (const Error& e) { // callers that catch every Error still see it
    EXPECT_EQ(std::string(e.what()), "internal error: x");
    EXPECT_NE(dynamic_cast<const InternalError*>(&e), nullptr);
  }
  try {
    throw Error("internal error: spelled by a user");
  } catch (const Error& e) {
    EXPECT_EQ(dynamic_cast<const InternalError*>(&e), nullptr);
  }
}

} // namespace
} // namespace shardc
