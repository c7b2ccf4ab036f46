// The thread budget: cgroup CPU quotas (v1 and v2, the tightest on the way to the root) and
// SHARDC_THREADS.
#include "shardc/exec/CompiledFunction.h"
#include "shardc/support/Error.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace shardc {
namespace {

class CgroupTest : public ::testing::Test {
protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("shardc-cgroup-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const fs::path& relative, const std::string& text) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  int limit() { return cgroupCpuLimit((root_ / "self").string(), (root_ / "fs").string()); }
  fs::path root_;
};

TEST_F(CgroupTest, NoQuotaIsNoLimit) {
  write("self", "0::/user/job\n");
  write("fs/user/job/cpu.max", "max 100000\n");
  EXPECT_EQ(limit(), 0);
}

TEST_F(CgroupTest, V2TakesTheTightestQuotaUpToTheRootRoundedUp) {
  write("self", "0::/user/job\n");
  write("fs/user/job/cpu.max", "250000 100000\n"); // 2.5 cores
  write("fs/user/cpu.max", "150000 100000\n");     // 1.5 cores above it
  EXPECT_EQ(limit(), 2);
}

TEST_F(CgroupTest, V1ReadsTheCpuController) {
  write("self", "4:memory:/other\n3:cpu,cpuacct:/docker/abc\n");
  write("fs/cpu/docker/abc/cpu.cfs_quota_us", "300000\n");
  write("fs/cpu/docker/abc/cpu.cfs_period_us", "100000\n");
  write("fs/cpu/cpu.cfs_quota_us", "-1\n"); // the root: none
  write("fs/cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(limit(), 3);
}

TEST_F(CgroupTest, UnreadableOrMalformedFilesAreNoLimit) {
  write("self", "garbage\n0::relative\n");
  write("fs/relative/cpu.max", "lots 0\n");
  EXPECT_EQ(limit(), 0);
  EXPECT_EQ(cgroupCpuLimit((root_ / "missing").string(), (root_ / "fs").string()), 0);
}

TEST(ThreadsTest, ShardcThreadsCapsWhereThereIsNoFlag) {
  int all = intraOpThreads(1, 0);
  ::setenv("SHARDC_THREADS", "1", 1);
  EXPECT_EQ(intraOpThreads(1, 0), 1);
  EXPECT_EQ(intraOpThreads(1, 4096), all); // --threads wins
  ::setenv("SHARDC_THREADS", "two", 1);
  EXPECT_THROW(intraOpThreads(1, 0), Error);
  ::setenv("SHARDC_THREADS", "0", 1);
  EXPECT_THROW(intraOpThreads(1, 0), Error);
  ::unsetenv("SHARDC_THREADS");
  EXPECT_EQ(intraOpThreads(1, 0), all);
}

} // namespace
} // namespace shardc
