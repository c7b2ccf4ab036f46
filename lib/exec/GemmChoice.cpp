#include "shardc/exec/GemmChoice.h"

#include "OpenBlas.h"

#include "shardc/support/Digest.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dnnl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>

namespace shardc {
namespace {

struct Choice {
  std::string way;            // the faster
  double seconds[2] = {0, 0}; // of the two ways, in the order they were asked
  std::string names[2];       // the two ways, once this process asked (else empty)
  std::string source;         // "measured now" or "cached in FILE"
  bool used = false;          // by this process
};

std::mutex mu;
std::map<std::string, Choice> decided; // by key, under mu
std::map<std::string, int> bf16Ways;   // how bf16 steps were bound: steps each, under mu
bool cacheRead = false;

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      return colon == std::string::npos ? line
                                        : line.substr(line.find_first_not_of(" ", colon + 1));
    }
  return "unknown CPU";
}

// What a timing depends on besides the shape: the CPU and both libraries' builds.
const std::string& machine() {
  static const std::string m = [] {
    const dnnl_version_t* v = dnnl_version();
    return cpuModel() + " | OpenBLAS " + openblas::config() + " | oneDNN " +
           std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch);
  }();
  return m;
}

// The machine's cache file, "" when the user has no cache folder.
std::string cachePath() {
  std::string dir;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    dir = x;
  else if (const char* h = std::getenv("HOME"); h && *h)
    dir = std::string(h) + "/.cache";
  else
    return "";
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(digestBytes(machine().data(), machine().size())));
  return dir + "/shardc/gemm-" + hex + ".txt";
}

// Lines "KEY FASTER_WAY FIRST_SECONDS SECOND_SECONDS" after a "# MACHINE" line (for a GEMM:
// openblas|onednn, OpenBLAS's seconds, oneDNN's). A cache only saves time: a file that does not
// parse, or names another machine, is ignored, and so is a way the asking kernel does not name.
void readCache(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line) || line != "# " + machine()) return;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    Choice c;
    if (!(fields >> key >> c.way >> c.seconds[0] >> c.seconds[1])) continue;
    c.source = "cached in " + path;
    decided.insert_or_assign(key, c); // the last line of a key is its latest decision
  }
}

// Adds `key` to the file, keeping what other processes wrote meanwhile. Best effort: a cache
// that cannot be written is left as it is, and the next run measures again.
void writeCache(const std::string& path, const std::string& key, const Choice& c) {
  std::string text;
  {
    std::ifstream in(path);
    std::string line;
    if (std::getline(in, line) && line == "# " + machine())
      for (text = line + "\n"; std::getline(in, line);)
        if (line.rfind(key + " ", 0) != 0) text += line + "\n"; // not the key's old decision
  }
  if (text.empty()) text = "# " + machine() + "\n";
  char times[64];
  std::snprintf(times, sizeof times, " %.9g %.9g\n", c.seconds[0], c.seconds[1]);
  text += key + " " + c.way + times;
  try {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    if (!ec) writeFileAtomic(path, text);
  } catch (const Error&) {
  }
}

} // namespace

bool firstWayFaster(const std::string& key, const std::string& first, const std::string& second,
                    const std::function<std::pair<double, double>()>& measure) {
  std::lock_guard<std::mutex> lock(mu);
  std::string path = cachePath();
  if (!cacheRead && !path.empty()) readCache(path);
  cacheRead = true;
  if (auto it = decided.find(key);
      it != decided.end() && (it->second.way == first || it->second.way == second)) {
    it->second.used = true;
    it->second.names[0] = first;
    it->second.names[1] = second;
    return it->second.way == first;
  }
  Choice c;
  c.used = true;
  std::tie(c.seconds[0], c.seconds[1]) = measure();
  c.names[0] = first;
  c.names[1] = second;
  c.way = c.seconds[0] <= c.seconds[1] ? first : second;
  c.source = "measured now";
  decided.insert_or_assign(key, c);
  if (!path.empty()) writeCache(path, key, c);
  return c.way == first;
}

bool gemmOnOpenBlas(const std::string& key, const std::function<GemmTimes()>& measure) {
  return firstWayFaster(key, "openblas", "onednn", [&] {
    GemmTimes t = measure();
    return std::make_pair(t.openblas, t.onednn);
  });
}

std::vector<std::string> gemmChoices() {
  std::lock_guard<std::mutex> lock(mu);
  std::vector<std::string> out;
  for (const auto& [key, c] : decided) {
    if (!c.used) continue;
    char buf[160];
    std::snprintf(buf, sizeof buf, " (%s %.3f ms, %s %.3f ms, ", c.names[0].c_str(),
                  c.seconds[0] * 1e3, c.names[1].c_str(), c.seconds[1] * 1e3);
    out.push_back(key + ": " + c.way + buf + c.source + ")");
  }
  return out;
}

void noteBf16Step(const std::string& kind, const std::string& how) {
  std::lock_guard<std::mutex> lock(mu);
  ++bf16Ways[kind + ": " + how];
}

std::vector<std::string> bf16StepWays() {
  std::lock_guard<std::mutex> lock(mu);
  std::vector<std::string> out;
  for (const auto& [how, n] : bf16Ways)
    out.push_back(std::to_string(n) + " " + how);
  return out;
}

double leastSeconds(int reps, const std::function<void()>& fn) {
  auto t0 = std::chrono::steady_clock::now();
  fn();
  // A call long enough to time is timed once: the choice stays within a few calls' time.
  if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > 0.02) reps = 1;
  double best = 0;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = i == 0 ? s : std::min(best, s);
  }
  return best;
}

} // namespace shardc
