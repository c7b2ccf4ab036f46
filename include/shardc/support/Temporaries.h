// Temporary folders named after the process that writes them (`PREFIX...HOST-PID`), so that
// a later process removes only those whose writer is gone: never a live sibling's.
#pragma once

#include <string>

namespace shardc {

// This machine's name, reduced to [A-Za-z0-9.-] (it becomes part of file names).
std::string hostName();
// `HOST-PID` of this process.
std::string processTag();
// Removes the entries of `folder` named PREFIX followed by `HOST-PID` or `...-HOST-PID` whose
// HOST is this machine and whose process no longer exists. Another host's entries (a shared
// folder) are left alone: their process ids mean nothing here.
void removeAbandoned(const std::string& folder, const std::string& prefix);

// While alive, SIGINT, SIGTERM and SIGHUP (where their action is the default: death) first
// remove `folder` and what it holds, then kill the process as before: a compile stopped by
// Ctrl-C leaves no staging folder. One at a time per process.
class RemovedOnSignal {
public:
  explicit RemovedOnSignal(const std::string& folder);
  ~RemovedOnSignal();
  RemovedOnSignal(const RemovedOnSignal&) = delete;
  RemovedOnSignal& operator=(const RemovedOnSignal&) = delete;

private:
  bool installed_[3] = {};
};

} // namespace shardc
