#include "shardc/ir/Diagnostics.h"

#include <ostream>

namespace shardc {

std::string DiagEngine::format(const Diagnostic& d) const {
  std::string s = filename_;
  if (d.loc.line) s += ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col);
  return s + ": error: " + d.message;
}

std::string DiagEngine::formatLocated(const Diagnostic& d) const {
  std::string s = filename_;
  if (d.loc.line) s += ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col);
  return s + ": " + d.message;
}

void DiagEngine::print(std::ostream& os) const {
  for (const auto& d : diags_)
    os << format(d) << "\n";
}

} // namespace shardc
