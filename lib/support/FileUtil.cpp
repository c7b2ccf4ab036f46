#include "shardc/support/FileUtil.h"

#include "shardc/support/Error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace shardc {

int openRegularFile(const std::string& path, size_t& size) {
  // Non-blocking, so that a FIFO is refused below instead of waiting for a writer; only
  // regular files are read, so that a device such as /dev/zero cannot be read without end.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": not a regular file");
  }
  size = static_cast<size_t>(st.st_size);
  return fd;
}

std::string readFile(const std::string& path) {
  size_t size = 0;
  int fd = openRegularFile(path, size);
  std::string data;
  try {
    data.resize(size);
  } catch (const std::exception&) {
    ::close(fd);
    throw Error(path + ": too large to read (" + std::to_string(size) + " bytes)");
  }
  size_t got = 0;
  while (got < data.size()) {
    ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      throw Error(path + (n < 0 ? ": read error: " + std::string(std::strerror(e))
                                : std::string(": changed size while being read")));
    }
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  return data;
}

AtomicFileWriter::AtomicFileWriter(std::string path)
    : path_(std::move(path)), tmp_(path_ + ".tmp." + std::to_string(::getpid())) {
  // The contents go to an unnamed file first (O_TMPFILE), named only once complete: a process
  // killed while writing leaves nothing behind. Filesystems without O_TMPFILE get a named
  // temporary file, removed on every error.
  std::string dir = std::filesystem::path(path_).parent_path().string();
  fd_ = ::open(dir.empty() ? "." : dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  unnamed_ = fd_ >= 0;
  if (!unnamed_) fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) throw Error(path_ + ": cannot write: " + std::strerror(errno));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ < 0) return;
  ::close(fd_);
  if (!unnamed_) std::remove(tmp_.c_str());
}

void AtomicFileWriter::append(const char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd_, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(path_ + ": write failed: " + std::strerror(n < 0 ? errno : EIO));
    done += static_cast<size_t>(n);
  }
}

void AtomicFileWriter::commit() {
  if (unnamed_) {
    std::string self = "/proc/self/fd/" + std::to_string(fd_);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, tmp_.c_str(), AT_SYMLINK_FOLLOW) != 0)
      throw Error(path_ + ": write failed: " + std::strerror(errno));
    unnamed_ = false; // named now: the destructor removes it if the rename fails
  }
  if (::close(std::exchange(fd_, -1)) != 0) {
    int e = errno;
    std::remove(tmp_.c_str());
    throw Error(path_ + ": write failed: " + std::strerror(e));
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    int e = errno;
    std::remove(tmp_.c_str());
    throw Error(path_ + ": cannot rename into place: " + std::strerror(e));
  }
}

void writeFileAtomic(const std::string& path, const std::string& contents) {
  AtomicFileWriter w(path);
  w.append(contents.data(), contents.size());
  w.commit();
}

void checkWritable(const std::string& path, const std::string& what, bool folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p(path);
  if (fs::exists(p, ec)) {
    bool isDir = fs::is_directory(p, ec);
    if (folder && !isDir) throw Error(what + " " + path + " exists and is not a folder");
    if (!folder && isDir) throw Error(what + " " + path + " is a folder, not a file");
  }
  // The nearest existing folder above must take new entries (folders are created later).
  fs::path up = folder && fs::exists(p, ec) ? p : p.parent_path();
  while (!up.empty() && !fs::exists(up, ec))
    up = up.parent_path();
  if (up.empty()) up = ".";
  if (!fs::is_directory(up, ec) || ::access(up.c_str(), W_OK) != 0)
    throw Error(what + " " + path + ": cannot write under " + up.string());
}

} // namespace shardc
