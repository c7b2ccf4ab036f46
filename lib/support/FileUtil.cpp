#include "shardc/support/FileUtil.h"

#include "shardc/support/Error.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <memory>
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

namespace {

// `path` with its symbolic links followed to what they name (which need not exist yet), so
// that writing through a link writes its target rather than replacing the link.
std::string followLinks(const std::string& path) {
  namespace fs = std::filesystem;
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::error_code ec;
    fs::path to = fs::read_symlink(p, ec);
    if (ec) throw Error(path + ": cannot read the link: " + ec.message());
    p = to.is_absolute() ? to.string() : (fs::path(p).parent_path() / to).string();
  }
  throw Error(path + ": too many levels of symbolic links");
}

// Opens an existing non-regular file (a device, a FIFO) for writing in place. A FIFO nobody
// reads is refused rather than waited on.
int openInPlace(const std::string& target, const std::string& path, int flags) {
  int fd = ::open(target.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | flags);
  if (fd < 0)
    throw Error(path + ": cannot write: " +
                (errno == ENXIO ? std::string("a FIFO with no reader") : std::strerror(errno)));
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

// What is at `target`; Special: a device, a FIFO, a socket.
enum class FileKind { None, Regular, Folder, Special };
FileKind kindOf(const std::string& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) return FileKind::None;
  return S_ISREG(st.st_mode)   ? FileKind::Regular
         : S_ISDIR(st.st_mode) ? FileKind::Folder
                               : FileKind::Special;
}

} // namespace

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)) {
  std::string target = followLinks(path_);
  FileKind kind = kindOf(target);
  if (kind == FileKind::Folder) throw Error(path_ + ": is a folder, not a file");
  if (kind == FileKind::Special) {
    fd_ = openInPlace(target, path_, 0);
    inPlace_ = true;
    return;
  }
  // The contents go to an unnamed file first (O_TMPFILE), named only once complete: a process
  // killed while writing leaves nothing behind. Filesystems without O_TMPFILE get a named
  // temporary file, removed on every error.
  target_ = target;
  tmp_ = target_ + ".tmp." + std::to_string(::getpid());
  std::string dir = std::filesystem::path(target_).parent_path().string();
  fd_ = ::open(dir.empty() ? "." : dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  unnamed_ = fd_ >= 0;
  if (!unnamed_) fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) throw Error(path_ + ": cannot write: " + std::strerror(errno));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ < 0) return;
  ::close(fd_);
  if (!unnamed_ && !inPlace_) std::remove(tmp_.c_str());
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
  if (inPlace_) {
    if (::close(std::exchange(fd_, -1)) != 0)
      throw Error(path_ + ": write failed: " + std::strerror(errno));
    return;
  }
  // On disk before it is named, so that a crash after the rename cannot leave it empty.
  if (::fsync(fd_) != 0) throw Error(path_ + ": write failed: " + std::strerror(errno));
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
  if (std::rename(tmp_.c_str(), target_.c_str()) != 0) {
    int e = errno;
    std::remove(tmp_.c_str());
    throw Error(path_ + ": cannot rename into place: " + std::strerror(e));
  }
}

void writeFilesAtomic(const std::vector<std::pair<std::string, FileContents>>& files) {
  std::vector<std::unique_ptr<AtomicFileWriter>> writers;
  for (const auto& [path, contents] : files)
    writers.push_back(std::make_unique<AtomicFileWriter>(path));
  for (size_t i = 0; i < files.size(); ++i) {
    std::string text = files[i].second();
    writers[i]->append(text.data(), text.size());
  }
  for (auto& w : writers)
    w->commit();
}

std::FILE* openOutputStream(const std::string& path, bool append, const std::string& what) {
  std::string target = followLinks(path);
  FileKind kind = kindOf(target);
  if (kind == FileKind::Folder) throw Error(what + " " + path + ": is a folder, not a file");
  int fd = -1;
  if (kind == FileKind::Special) {
    fd = openInPlace(target, what + " " + path, append ? O_APPEND : 0);
  } else {
    if (auto folder = std::filesystem::path(target).parent_path(); !folder.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(folder, ec);
    }
    fd = ::open(target.c_str(),
                O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | (append ? O_APPEND : O_TRUNC), 0666);
    if (fd < 0) throw Error(what + " " + path + ": cannot open: " + std::strerror(errno));
  }
  std::FILE* f = ::fdopen(fd, append ? "a" : "w");
  if (!f) {
    ::close(fd);
    throw Error(what + " " + path + ": cannot open: " + std::strerror(errno));
  }
  return f;
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
  if (!folder && (path.empty() || path.back() == '/'))
    throw Error(what + " '" + path + "' names a folder, not a file");
  for (const fs::path& part : p)
    if (part.string().size() > NAME_MAX)
      throw Error(what + " " + path + ": a name in it is longer than " + std::to_string(NAME_MAX) +
                  " bytes");
  // The nearest existing folder above must take new entries (folders are created later).
  fs::path up = folder && fs::exists(p, ec) ? p : p.parent_path();
  while (!up.empty() && !fs::exists(up, ec))
    up = up.parent_path();
  if (up.empty()) up = ".";
  if (!fs::is_directory(up, ec) || ::access(up.c_str(), W_OK) != 0)
    throw Error(what + " " + path + ": cannot write under " + up.string());
}

} // namespace shardc
