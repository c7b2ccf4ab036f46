#include "CompileOutputs.h"

#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <unistd.h>

namespace shardc {
namespace fs = std::filesystem;

namespace {

std::string hostName() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "host";
  std::string h = host;
  for (char& c : h)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.')) c = '_';
  return h.empty() ? "host" : h;
}

// The temporary folders that earlier compiles of the same name on this host left when they
// were killed (their process is gone). Another host's (a shared folder) are left alone: its
// process ids mean nothing here.
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
  // The topmost folder of the output folder's path that does not exist yet: the compile
  // creates it, and removes it again if it fails.
  std::error_code ec;
  for (fs::path p = outputFolder; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    created_ = p;
    if (p == p.parent_path()) break;
  }
  tag_ = hostName() + "-" + std::to_string(::getpid());
  std::string prefix = "." + name + ".tmp-" + hostName() + "-";
  removeAbandoned(outputFolder, prefix);
  work_ = outputFolder / (prefix + std::to_string(::getpid()));
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
