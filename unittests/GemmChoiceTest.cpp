#include "shardc/exec/GemmChoice.h"

#include "shardc/support/FileUtil.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

using namespace shardc;

// A shape is timed once per process and kept in the machine's cache file; the faster library
// wins; what the process decided is listed.
TEST(GemmChoiceTest, TimesEachShapeOnceAndKeepsTheFaster) {
  std::string dir = ::testing::TempDir() + "/gemm-cache." + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  ::setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  int timed = 0;
  auto times = [&](double blas, double dnnl) {
    return [&timed, blas, dnnl] {
      ++timed;
      return GemmTimes{blas, dnnl};
    };
  };
  EXPECT_TRUE(gemmOnOpenBlas("test:blas-faster", times(1e-3, 2e-3)));
  EXPECT_FALSE(gemmOnOpenBlas("test:dnnl-faster", times(3e-3, 2e-3)));
  EXPECT_TRUE(gemmOnOpenBlas("test:blas-faster", times(9, 1))); // decided: not timed again
  EXPECT_EQ(timed, 2);
  std::string text;
  for (const auto& f : std::filesystem::directory_iterator(dir + "/shardc"))
    text = readFile(f.path().string());
  EXPECT_EQ(text.rfind("# ", 0), 0u) << text; // the machine first
  EXPECT_NE(text.find("\ntest:blas-faster openblas 0.001 0.002\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ntest:dnnl-faster onednn 0.003 0.002\n"), std::string::npos) << text;
  bool listed = false;
  for (const std::string& line : gemmChoices())
    listed |= line == "test:dnnl-faster: onednn (openblas 3.000 ms, onednn 2.000 ms, measured now)";
  EXPECT_TRUE(listed);
  std::filesystem::remove_all(dir);
}

// Any two ways to run a kernel (a bf16 convolution's bf16 and f32) are decided alike, listed
// under their own names; a cached decision that names neither way is measured again.
TEST(GemmChoiceTest, DecidesBetweenAnyTwoNamedWays) {
  std::string dir = ::testing::TempDir() + "/way-cache." + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  ::setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  int timed = 0;
  auto times = [&timed](double first, double second) {
    return [&timed, first, second] {
      ++timed;
      return std::make_pair(first, second);
    };
  };
  EXPECT_FALSE(firstWayFaster("test:conv", "bf16", "f32", times(2e-3, 1e-3)));
  EXPECT_FALSE(firstWayFaster("test:conv", "bf16", "f32", times(1, 2))); // decided
  EXPECT_EQ(timed, 1);
  bool listed = false;
  for (const std::string& line : gemmChoices())
    listed |= line == "test:conv: f32 (bf16 2.000 ms, f32 1.000 ms, measured now)";
  EXPECT_TRUE(listed);
  // The same key asked with other ways: the cached "f32" names neither. The file keeps the
  // key's latest decision only.
  EXPECT_TRUE(firstWayFaster("test:conv", "openblas", "onednn", times(1e-3, 2e-3)));
  EXPECT_EQ(timed, 2);
  std::string text;
  for (const auto& f : std::filesystem::directory_iterator(dir + "/shardc"))
    text = readFile(f.path().string());
  size_t at = text.find("\ntest:conv ");
  EXPECT_NE(at, std::string::npos) << text;
  EXPECT_EQ(text.find("\ntest:conv ", at + 1), std::string::npos) << text;
  EXPECT_NE(text.find("\ntest:conv openblas "), std::string::npos) << text;
  std::filesystem::remove_all(dir);
}
