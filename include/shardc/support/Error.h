// The two kinds of failure. Error: what the user gave is wrong or cannot be done (a bad
// file, an index out of range at run time); exit status 1. InternalError: a compiler
// invariant broke, a bug in shardc; exit status 2 in every tool, told apart by type.
// SHARDC_CHECK states an invariant in every build type (NDEBUG does not remove it).
#pragma once

#include <stdexcept>
#include <string>

namespace shardc {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

// Its message starts "internal error: ".
class InternalError : public Error {
public:
  explicit InternalError(const std::string& msg) : Error("internal error: " + msg) {}
};

// How a tool ends on an exception: its message and exit status, 1 for what the user gave
// (Error, a file system error, no memory left) and 2 for a bug (InternalError, or another
// exception no check turned into a message, said as "internal error: ...").
struct Failure {
  std::string message;
  int status;
};
Failure failureOf(const std::exception& e);

[[noreturn]] void failCheck(const char* file, int line, const char* condition,
                            const std::string& message);

} // namespace shardc

// Throws InternalError naming the source line, the condition and `message` unless `cond`.
#define SHARDC_CHECK(cond, message)                                                                \
  do {                                                                                             \
    if (!(cond)) ::shardc::failCheck(__FILE__, __LINE__, #cond, message);                          \
  } while (false)
