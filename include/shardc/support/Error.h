// The user-error channel for failures that only show up at run time (an index out of
// range in a gather, a bad input file). Compiler bugs are assertions, not Errors.
#pragma once

#include <stdexcept>
#include <string>

namespace shardc {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

} // namespace shardc
