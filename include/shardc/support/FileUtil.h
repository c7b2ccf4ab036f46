// File helpers: whole-file reads, and the one way outputs are written. The rule for every
// file any command writes: a regular file (or a new one) is written atomically (temporary
// file, fsync, rename), so a failed or interrupted run never leaves a half-written output;
// an existing device or FIFO (/dev/null, /dev/stdout, a pipe) is written in place, never
// replaced; a symbolic link is followed and the rule applied to its target. Every write,
// flush and close is checked.
#pragma once

#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace shardc {

// Reads a whole regular file (FIFOs, devices and directories are refused, so that no read
// blocks or runs without end). Throws shardc::Error naming the path.
std::string readFile(const std::string& path);
// Opens a regular file for reading (as readFile, refusing FIFOs and devices); returns the
// descriptor, to be closed by the caller, and sets `size`.
int openRegularFile(const std::string& path, size_t& size);
void writeFileAtomic(const std::string& path, const std::string& contents);

// A file written in pieces and named `path` only by commit(): until then it is an unnamed
// file (or a temporary one, removed if never committed), so a failed or killed writer leaves
// nothing behind. A device or FIFO at `path` is written in place. Throws shardc::Error naming
// the path.
class AtomicFileWriter {
public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  void append(const char* data, size_t size);
  void commit();

private:
  std::string path_, target_, tmp_;
  int fd_ = -1;
  bool unnamed_ = false, inPlace_ = false;
};
// Writes several files as one output: each is opened (its temporary file made) before any
// contents are produced, and all are named only once every one is written, so a bad path
// or a full disk among them leaves none of them half done or replaced. Each file's contents are
// made once per file, in order.
using FileContents = std::function<std::string()>;
void writeFilesAtomic(const std::vector<std::pair<std::string, FileContents>>& files);
// A stream written as it goes (--metrics): created with its folders, truncated or appended
// to; a device or FIFO is opened in place (a FIFO without a reader is refused, not waited
// on). `what` names the option in errors. The caller checks its writes and fclose.
std::FILE* openOutputStream(const std::string& path, bool append, const std::string& what);
// Throws shardc::Error (naming `what`, e.g. "--save-weights") unless `path` can be written
// as a file (folder = false) or a folder, creating the folders above it: checked before a
// long run or compile, so that a bad output path fails before anything is written.
void checkWritable(const std::string& path, const std::string& what, bool folder);

} // namespace shardc
