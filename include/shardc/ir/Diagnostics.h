// User-facing diagnostics: "file:line:col: error: message", collected in order.
#pragma once

#include "shardc/ir/IR.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace shardc {

struct Diagnostic {
  Loc loc;
  std::string message;
};

class DiagEngine {
public:
  explicit DiagEngine(std::string filename) : filename_(std::move(filename)) {}
  void error(Loc loc, std::string message) { diags_.push_back({loc, std::move(message)}); }
  bool hasErrors() const { return !diags_.empty(); }
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  const std::string& filename() const { return filename_; }
  void clear() { diags_.clear(); }
  // One line per diagnostic: "file:line:col: error: message".
  std::string format(const Diagnostic& d) const;
  // "file:line:col: message", for wrapping into another error.
  std::string formatLocated(const Diagnostic& d) const;
  void print(std::ostream& os) const;

private:
  std::string filename_;
  std::vector<Diagnostic> diags_;
};

} // namespace shardc
