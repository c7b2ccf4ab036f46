// The compile log, kept for NAME.log; --verbose mirrors it on stderr.
#pragma once

#include <iostream>
#include <set>
#include <string>

namespace shardc {

class CompileLog {
public:
  explicit CompileLog(bool verbose, bool warnings = true)
      : verbose_(verbose), warnings_(warnings) {}
  void line(const std::string& s) {
    text_ += s + "\n";
    if (verbose_) std::cerr << "shardc: " << s << "\n";
  }
  // Also on stderr without --verbose, once (a compile that starts over with micro-batches
  // meets its warnings again), unless the log keeps warnings to itself.
  void warn(const std::string& s) {
    text_ += "warning: " + s + "\n";
    if (warnings_ && warned_.insert(s).second) std::cerr << "shardc: warning: " << s << "\n";
  }
  const std::string& text() const { return text_; }

private:
  bool verbose_, warnings_;
  std::set<std::string> warned_;
  std::string text_;
};

} // namespace shardc
