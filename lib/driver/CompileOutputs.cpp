#include "CompileOutputs.h"

#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"
#include "shardc/support/Temporaries.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <unistd.h>

namespace shardc {
namespace fs = std::filesystem;

CompileOutputs::CompileOutputs(const fs::path& outputFolder, const std::string& name,
                               fs::path pefDir, fs::path logDir, bool keep)
    : outputFolder_(outputFolder), pefDir_(std::move(pefDir)), logDir_(std::move(logDir)),
      name_(name), keep_(keep) {
  // The topmost folder of the output folder's path that does not exist yet: the compile
  // creates it, and removes it again if it fails.
  std::error_code ec;
  for (fs::path p = outputFolder; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    created_ = p;
    if (p == p.parent_path()) break;
  }
  tag_ = processTag();
  std::string prefix = "." + name + ".tmp-";
  removeAbandoned(outputFolder.string(), prefix);
  work_ = outputFolder / (prefix + tag_);
  if (!keep_) onSignal_ = std::make_unique<RemovedOnSignal>(work_.string());
}

CompileOutputs::~CompileOutputs() {
  if (kept_) return;
  std::error_code ignored;
  fs::remove_all(work_, ignored);
  if (published_ || created_.empty()) return;
  // The folders this compile created, innermost first, each only if empty.
  for (fs::path p = outputFolder_; !p.empty(); p = p.parent_path()) {
    if (!fs::remove(p, ignored) || p == created_) break;
  }
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
  // The PEF last: if a move fails, no new PEF stands beside the old log.
  std::stable_partition(files_.begin(), files_.end(), [&](const auto& file) {
    return !(file.first == Place::Pef && file.second == name_ + ".pef");
  });
  for (const auto& [place, relative] : files_) {
    fs::path from = work_ / (place == Place::Pef ? "pef" : "log") / relative;
    fs::path to = (place == Place::Pef ? pefDir_ : logDir_) / relative;
    fs::create_directories(to.parent_path());
    std::error_code ec;
    // A link or a device in the way is written through (FileUtil.h's rule), not replaced.
    if (auto kind = fs::symlink_status(to, ec).type();
        kind != fs::file_type::regular && kind != fs::file_type::not_found) {
      writeFileAtomic(to.string(), readFile(from.string()));
      continue;
    }
    ec.clear();
    fs::rename(from, to, ec);
    if (ec == std::errc::cross_device_link) { // a --log-dir on another filesystem
      writeFileAtomic(to.string(), readFile(from.string()));
      ec.clear();
    }
    if (ec) throw Error(to.string() + ": cannot move into place: " + ec.message());
  }
  files_.clear();
  published_ = true;
}

std::string CompileOutputs::keepAfterFailure(const std::string& log) {
  if (!keep_) return "";
  // Renamed without the leading dot: in view, and out of reach of removeAbandoned. A name
  // already taken (say, by a PEF folder of that name) gets a suffix.
  fs::path kept = outputFolder_ / (name_ + ".tmp-" + tag_);
  std::error_code ec;
  for (int n = 1; fs::exists(kept, ec) && n < 1000; ++n)
    kept = outputFolder_ / (name_ + ".tmp-" + tag_ + "-" + std::to_string(n));
  try {
    fs::create_directories(work_);
    writeFileAtomic((work_ / (name_ + ".log")).string(), log);
    fs::rename(work_, kept);
  } catch (const std::exception&) {
    return ""; // nothing to keep where nothing can be written
  }
  kept_ = true;
  return kept.string();
}

} // namespace shardc
