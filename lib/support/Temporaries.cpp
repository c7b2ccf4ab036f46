#include "shardc/support/Temporaries.h"

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <sys/syscall.h>
#include <unistd.h>

namespace shardc {
namespace {

constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
char staged[4096]; // the folder RemovedOnSignal guards ("" when none)

struct LinuxDirent {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[1];
};

// Removes the entries of the folder `dir` refers to, depth first, with system calls only
// (async-signal-safe: it runs in a signal handler). Depth is bounded: a staging folder is
// shallow.
void removeContents(int dir, int depth) {
  alignas(8) char buffer[2048];
  for (;;) {
    long n = ::syscall(SYS_getdents64, dir, buffer, sizeof buffer);
    if (n <= 0) return;
    bool removed = false;
    for (long at = 0; at < n;) {
      auto* e = reinterpret_cast<LinuxDirent*>(buffer + at);
      at += e->reclen;
      if (e->name[0] == '.' && (e->name[1] == 0 || (e->name[1] == '.' && e->name[2] == 0)))
        continue;
      if (e->type == DT_DIR && depth < 16) {
        int sub = ::openat(dir, e->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) {
          removeContents(sub, depth + 1);
          ::close(sub);
        }
        removed |= ::unlinkat(dir, e->name, AT_REMOVEDIR) == 0;
      } else {
        removed |= ::unlinkat(dir, e->name, 0) == 0;
      }
    }
    if (removed) ::lseek(dir, 0, SEEK_SET); // the listing changed under us: read it again
  }
}

void removeStagedAndDie(int sig) {
  int dir = ::open(staged, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir >= 0) {
    removeContents(dir, 0);
    ::close(dir);
    ::rmdir(staged);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

} // namespace

RemovedOnSignal::RemovedOnSignal(const std::string& folder) {
  if (folder.size() >= sizeof staged) return;
  folder.copy(staged, folder.size());
  staged[folder.size()] = 0;
  for (int i = 0; i < 3; ++i) {
    struct sigaction now {};
    if (::sigaction(kSignals[i], nullptr, &now) != 0 || now.sa_handler != SIG_DFL) continue;
    struct sigaction act {};
    act.sa_handler = removeStagedAndDie;
    sigemptyset(&act.sa_mask);
    for (int s : kSignals)
      sigaddset(&act.sa_mask, s);
    installed_[i] = ::sigaction(kSignals[i], &act, nullptr) == 0;
  }
}

RemovedOnSignal::~RemovedOnSignal() {
  for (int i = 0; i < 3; ++i)
    if (installed_[i]) ::signal(kSignals[i], SIG_DFL);
  staged[0] = 0;
}

std::string hostName() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "host";
  std::string h = host;
  for (char& c : h)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.')) c = '_';
  return h.empty() ? "host" : h;
}

std::string processTag() {
  return hostName() + "-" + std::to_string(::getpid());
}

void removeAbandoned(const std::string& folder, const std::string& prefix) {
  namespace fs = std::filesystem;
  std::string host = hostName();
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    std::string file = it->path().filename().string();
    if (file.rfind(prefix, 0) != 0) continue;
    size_t dash = file.rfind('-');
    if (dash == std::string::npos || dash < prefix.size()) continue;
    std::string pid = file.substr(dash + 1),
                rest = file.substr(prefix.size(), dash - prefix.size());
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9)
      continue;
    bool ours = rest == host ||
                (rest.size() > host.size() &&
                 rest.compare(rest.size() - host.size() - 1, std::string::npos, "-" + host) == 0);
    if (!ours) continue;
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    fs::remove_all(it->path(), ignored);
  }
}

} // namespace shardc
