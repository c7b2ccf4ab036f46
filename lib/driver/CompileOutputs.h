// Where a compile writes. Every file (the PEF, its strategy and sharded IR, the log, the
// --debug and --dump-kernels files) goes first into a temporary folder in the output folder,
// `.NAME.tmp-HOST-PID`, and publish() moves them into place once the compile has succeeded:
// a failed compile leaves nothing behind (not even the output folders it created), or, with
// --keep-temporary-files, that folder with the log up to the error, for diagnosing it,
// renamed NAME.tmp-HOST-PID. SIGINT, SIGTERM and SIGHUP remove the folder before the process
// dies; folders of compiles killed otherwise are removed by the next compile of the same name
// on the same host.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace shardc {
class RemovedOnSignal;

class CompileOutputs {
public:
  enum class Place { Pef, Log }; // the PEF's folder, the log folder
  CompileOutputs(const std::filesystem::path& outputFolder, const std::string& name,
                 std::filesystem::path pefDir, std::filesystem::path logDir, bool keep);
  ~CompileOutputs(); // removes the temporary folder unless published or kept
  CompileOutputs(const CompileOutputs&) = delete;
  CompileOutputs& operator=(const CompileOutputs&) = delete;

  // Where `relative` is staged (its folders created); the caller writes it there.
  std::string staged(Place place, const std::string& relative);
  void write(Place place, const std::string& relative, const std::string& contents);
  // Moves every staged file to its place, replacing what is there, the PEF last.
  void publish();
  // After a failure: with keep, writes `log` into the folder as NAME.log, renames it
  // NAME.tmp-HOST-PID and returns its path; "" otherwise.
  std::string keepAfterFailure(const std::string& log);

private:
  std::filesystem::path outputFolder_, work_, pefDir_, logDir_;
  std::filesystem::path created_; // the topmost output folder this compile creates, or ""
  std::string name_, tag_;        // tag_: HOST-PID
  bool keep_, kept_ = false, published_ = false;
  std::vector<std::pair<Place, std::string>> files_;
  std::unique_ptr<RemovedOnSignal> onSignal_; // Ctrl-C removes the temporary folder too
};

} // namespace shardc
