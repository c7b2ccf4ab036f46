// File helpers: whole-file reads and atomic writes (temporary file, then rename), so a
// failed or interrupted run never leaves a half-written output behind.
#pragma once

#include <cstddef>
#include <string>

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
// nothing behind. Throws shardc::Error naming the path.
class AtomicFileWriter {
public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  void append(const char* data, size_t size);
  void commit();

private:
  std::string path_, tmp_;
  int fd_ = -1;
  bool unnamed_ = false;
};
// Throws shardc::Error (naming `what`, e.g. "--save-weights") unless `path` can be written
// as a file (folder = false) or a folder, creating the folders above it: checked before a
// long run or compile, so that a bad output path fails before anything is written.
void checkWritable(const std::string& path, const std::string& what, bool folder);

} // namespace shardc
