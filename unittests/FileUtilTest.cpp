// writeFileAtomic and AtomicFileWriter: the file appears whole or not at all, also when the writer
// is killed.
#include "shardc/support/FileUtil.h"
#include "shardc/support/Error.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

using namespace shardc;
namespace fs = std::filesystem;

namespace {

fs::path freshDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / (name + "." + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::vector<std::string> entries(const fs::path& d) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(d))
    out.push_back(e.path().filename().string());
  return out;
}

} // namespace

TEST(FileUtilTest, WritesAndReplacesWholeFiles) {
  fs::path d = freshDir("atomic");
  std::string p = (d / "a.pef").string();
  writeFileAtomic(p, "first");
  writeFileAtomic(p, "second, longer");
  EXPECT_EQ(readFile(p), "second, longer");
  EXPECT_EQ(entries(d), std::vector<std::string>{"a.pef"});
  EXPECT_THROW(writeFileAtomic((d / "missing" / "b.pef").string(), "x"), Error);
  EXPECT_EQ(entries(d), std::vector<std::string>{"a.pef"});
  fs::remove_all(d);
}

// A file written in pieces appears on commit; one abandoned before it (an exception while the
// pieces were made) leaves nothing, and the old file stays.
TEST(FileUtilTest, PiecesAppearOnCommitOnly) {
  fs::path d = freshDir("pieces");
  std::string p = (d / "a.pef").string();
  writeFileAtomic(p, "old");
  {
    AtomicFileWriter w(p);
    w.append("new ", 4);
    w.append("whole", 5);
    EXPECT_EQ(readFile(p), "old");
    w.commit();
  }
  EXPECT_EQ(readFile(p), "new whole");
  {
    AtomicFileWriter w(p);
    w.append("half", 4);
  }
  EXPECT_EQ(readFile(p), "new whole");
  EXPECT_EQ(entries(d), std::vector<std::string>{"a.pef"});
  fs::remove_all(d);
}

// A writer killed in the middle of a large write leaves no file, named or temporary.
TEST(FileUtilTest, AKilledWriterLeavesNothing) {
  fs::path d = freshDir("killed");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string big(size_t{256} << 20, 'x');
    char c = 1;
    if (::write(ready[1], &c, 1) != 1) ::_exit(2);
    writeFileAtomic((d / "big.pef").string(), big);
    ::_exit(0);
  }
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::usleep(20000); // inside the write of 256 MiB
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the write ended before the kill; make it larger";
  EXPECT_EQ(entries(d), std::vector<std::string>{});
  fs::remove_all(d);
}
