// The compile log, kept for NAME.log; --verbose mirrors it on stderr.
#pragma once

#include <iostream>
#include <string>

namespace shardc {

class CompileLog {
public:
  explicit CompileLog(bool verbose) : verbose_(verbose) {}
  void line(const std::string& s) {
    text_ += s + "\n";
    if (verbose_) std::cerr << "shardc: " << s << "\n";
  }
  // Also on stderr without --verbose.
  void warn(const std::string& s) {
    text_ += "warning: " + s + "\n";
    std::cerr << "shardc: warning: " << s << "\n";
  }
  const std::string& text() const { return text_; }

private:
  bool verbose_;
  std::string text_;
};

} // namespace shardc
