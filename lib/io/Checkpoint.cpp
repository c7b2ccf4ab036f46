#include "shardc/io/Checkpoint.h"

#include "shardc/io/Npz.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"
#include "shardc/support/Temporaries.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/file.h>
#include <unistd.h>

namespace shardc {
namespace fs = std::filesystem;
namespace {

const char kPrefix[] = "step-";

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\u%04x", c);
      out += hex;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string progressJson(const RunProgress& p) {
  std::string args;
  for (const std::string& a : p.arguments)
    args += (args.empty() ? "" : ", ") + quote(a);
  char pef[32];
  std::snprintf(pef, sizeof pef, "%016llx", static_cast<unsigned long long>(p.pef));
  return "{\n  \"step\": " + std::to_string(p.step) + ",\n  \"epoch\": " + std::to_string(p.epoch) +
         ",\n  \"position\": " + std::to_string(p.position) +
         ",\n  \"batch\": " + std::to_string(p.batch) +
         ",\n  \"shuffle\": " + (p.shuffle ? "true" : "false") +
         ",\n  \"data_seed\": " + std::to_string(p.dataSeed) + ",\n  \"pef_checksum\": \"" + pef +
         "\",\n  \"arguments\": [" + args + "]\n}\n";
}

// progress.json as progressJson writes it: the value after `"key": `, up to the next comma
// or newline.
std::string field(const std::string& text, const std::string& key, const std::string& file) {
  size_t at = text.find("\"" + key + "\": ");
  if (at == std::string::npos) throw Error(file + ": no \"" + key + "\" field");
  at += key.size() + 4;
  size_t end = text.find_first_of(",\n", at);
  return text.substr(at, end - at);
}

uint64_t number(const std::string& text, const std::string& key, const std::string& file,
                int base = 10) {
  std::string v = field(text, key, file);
  if (base == 16 && v.size() > 2) v = v.substr(1, v.size() - 2); // quoted
  uint64_t out = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), out, base);
  if (r.ec != std::errc() || r.ptr != v.data() + v.size())
    throw Error(file + ": \"" + key + "\" is '" + v + "', not a non-negative integer");
  return out;
}

// The step of a checkpoint folder's name, or -1 when it is not one.
int64_t stepOf(const fs::path& p) {
  std::string name = p.filename().string();
  if (name.rfind(kPrefix, 0) != 0) return -1;
  int64_t step = -1;
  auto r = std::from_chars(name.data() + 5, name.data() + name.size(), step);
  return r.ec == std::errc() && r.ptr == name.data() + name.size() ? step : -1;
}

std::vector<std::pair<int64_t, fs::path>> checkpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, fs::path>> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (int64_t s = stepOf(e.path()); s >= 0 && e.is_directory()) out.emplace_back(s, e.path());
  if (ec) throw Error(dir + ": cannot list: " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

void writeCheckpoint(const std::string& dir, const RunProgress& p, const NamedTensors& params,
                     const NamedTensors& state, int64_t keep) {
  char name[40];
  std::snprintf(name, sizeof name, "%s%08lld", kPrefix, static_cast<long long>(p.step));
  fs::path final = fs::path(dir) / name;
  fs::path tmp = fs::path(dir) / (".tmp-" + std::string(name) + "-" + processTag());
  std::error_code ec;
  fs::create_directories(dir, ec);
  // What a killed run was writing: never a checkpoint, so not kept. A live run's is its own.
  removeAbandoned(dir, ".tmp-" + std::string(kPrefix));
  if (!fs::create_directory(tmp, ec) || ec)
    throw Error(dir + ": cannot create a checkpoint folder: " + ec.message());
  try {
    writeNpz((tmp / "params.npz").string(), params);
    writeNpz((tmp / "state.npz").string(), state);
    writeFileAtomic((tmp / "progress.json").string(), progressJson(p));
    fs::remove_all(final, ec); // a rerun from an earlier checkpoint writes this step again
    fs::rename(tmp, final);
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp, ec);
    throw Error(final.string() + ": cannot write the checkpoint: " + e.code().message());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  if (keep <= 0) return;
  auto all = checkpoints(dir);
  for (size_t i = 0; i + static_cast<size_t>(keep) < all.size(); ++i)
    fs::remove_all(all[i].second, ec);
}

RunProgress parseProgress(const std::string& text, const std::string& file) {
  RunProgress p;
  auto count = [&](const char* key) {
    uint64_t v = number(text, key, file);
    if (v > static_cast<uint64_t>(INT64_MAX))
      throw Error(file + ": \"" + key + "\" is " + std::to_string(v) + ", beyond any run");
    return static_cast<int64_t>(v);
  };
  p.step = count("step");
  p.epoch = count("epoch");
  p.position = count("position");
  p.batch = count("batch");
  p.dataSeed = number(text, "data_seed", file);
  p.pef = number(text, "pef_checksum", file, 16);
  std::string shuffle = field(text, "shuffle", file);
  if (shuffle != "true" && shuffle != "false")
    throw Error(file + ": \"shuffle\" is '" + shuffle + "', not true or false");
  p.shuffle = shuffle == "true";
  return p;
}

Checkpoint readLatestCheckpoint(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error("--resume " + dir + ": not a folder");
  auto all = checkpoints(dir);
  if (all.empty())
    throw Error("--resume " + dir + ": holds no checkpoint (no " + kPrefix + "N folder)");
  Checkpoint c;
  c.path = all.back().second.string();
  std::string file = c.path + "/progress.json";
  c.progress = parseProgress(readFile(file), file);
  RunProgress& p = c.progress;
  if (p.step != all.back().first)
    throw Error(file + ": says step " + std::to_string(p.step) + ", its folder another");
  c.params = readNpz(c.path + "/params.npz");
  c.state = readNpz(c.path + "/state.npz");
  return c;
}

void checkProgress(const Checkpoint& c, int64_t samples, int64_t batch) {
  const RunProgress& p = c.progress;
  std::string file = c.path + "/progress.json";
  auto refuse = [&](const std::string& why) {
    throw Error("--resume: " + file + " " + why +
                "; the checkpoint is damaged or was written over other data");
  };
  if (p.epoch > p.step)
    refuse("says epoch " + std::to_string(p.epoch) + " after only " + std::to_string(p.step) +
           " steps");
  if (batch == 0) return; // a run without --data reads no position
  // The batch may differ (a checkpoint resumes on other replica counts), so the position is
  // any sum of batches: it must only lie within the data, which the run then reads from.
  if (p.position > samples)
    refuse("says position " + std::to_string(p.position) + ", beyond the " +
           std::to_string(samples) + " samples of the data");
  if (p.batch == 0 && p.position > 0)
    refuse("says position " + std::to_string(p.position) + " for a run that read no data");
}

CheckpointLock::CheckpointLock(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::string path = (fs::path(dir) / ".lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0) throw Error("--checkpoint-dir " + dir + ": cannot lock: " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char owner[128] = {};
    ssize_t n = ::pread(fd_, owner, sizeof owner - 1, 0);
    ::close(fd_);
    throw Error("--checkpoint-dir " + dir + " is in use by another run" +
                (n > 0 ? " (" + std::string(owner, static_cast<size_t>(n)) + ")" : "") +
                "; give each run its own folder");
  }
  std::string tag = processTag();
  bool named = ::ftruncate(fd_, 0) == 0 &&
               ::pwrite(fd_, tag.data(), tag.size(), 0) == static_cast<ssize_t>(tag.size());
  static_cast<void>(named); // the owner's name only helps the message; the lock holds anyway
}

CheckpointLock::~CheckpointLock() {
  ::close(fd_); // releases the lock
}

} // namespace shardc
