#include "CompileOutputs.h"

#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <cerrno>
#include <csignal>
#include <unistd.h>

namespace shardc {
namespace fs = std::filesystem;

namespace {

// The temporary folders of earlier compiles of `name` whose process is gone.
void removeAbandoned(const fs::path& outputFolder, const std::string& prefix) {
  std::error_code ec;
  for (fs::directory_iterator it(outputFolder, ec), end; !ec && it != end; it.increment(ec)) {
    std::string file = it->path().filename().string();
    if (file.rfind(prefix, 0) != 0) continue;
    std::string pid = file.substr(prefix.size());
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9)
      continue;
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    fs::remove_all(it->path(), ignored);
  }
}

} // namespace

CompileOutputs::CompileOutputs(const fs::path& outputFolder, const std::string& name,
                               fs::path pefDir, fs::path logDir, bool keep)
    : outputFolder_(outputFolder), pefDir_(std::move(pefDir)), logDir_(std::move(logDir)),
      name_(name), keep_(keep) {
  std::error_code ec;
  createdFolder_ = !fs::exists(outputFolder, ec);
  std::string prefix = "." + name + ".tmp-";
  removeAbandoned(outputFolder, prefix);
  work_ = outputFolder / (prefix + std::to_string(::getpid()));
}

CompileOutputs::~CompileOutputs() {
  if (kept_) return;
  std::error_code ignored;
  fs::remove_all(work_, ignored);
  if (createdFolder_) fs::remove(outputFolder_, ignored); // only if empty
}

std::string CompileOutputs::staged(Place place, const std::string& relative) {
  fs::path p = work_ / (place == Place::Pef ? "pef" : "log") / relative;
  fs::create_directories(p.parent_path());
  files_.emplace_back(place, relative);
  return p.string();
}

void CompileOutputs::write(Place place, const std::string& relative, const std::string& contents) {
  writeFileAtomic(staged(place, relative), contents);
}

void CompileOutputs::publish() {
  for (const auto& [place, relative] : files_) {
    fs::path from = work_ / (place == Place::Pef ? "pef" : "log") / relative;
    fs::path to = (place == Place::Pef ? pefDir_ : logDir_) / relative;
    fs::create_directories(to.parent_path());
    std::error_code ec;
    fs::rename(from, to, ec);
    if (ec == std::errc::cross_device_link) { // a --log-dir on another filesystem
      writeFileAtomic(to.string(), readFile(from.string()));
      ec.clear();
    }
    if (ec) throw Error(to.string() + ": cannot move into place: " + ec.message());
  }
  files_.clear();
}

std::string CompileOutputs::keepAfterFailure(const std::string& log) {
  if (!keep_) return "";
  // Renamed without the leading dot: in view, and out of reach of removeAbandoned.
  fs::path kept = outputFolder_ / (name_ + ".tmp-" + std::to_string(::getpid()));
  try {
    fs::create_directories(work_);
    writeFileAtomic((work_ / (name_ + ".log")).string(), log);
    fs::remove_all(kept);
    fs::rename(work_, kept);
  } catch (const std::exception&) {
    return ""; // nothing to keep where nothing can be written
  }
  kept_ = true;
  return kept.string();
}

} // namespace shardc
