// `shardc COMMAND [options]` as a function: the tool's main, and the Python app scripts'.
#pragma once

#include "shardc/driver/Driver.h"

#include <string>
#include <vector>

namespace shardc {

// Parses argv (argv[0] the program) and runs the command; returns the exit status (0
// success, 1 a usage or input error, 2 an internal error) after printing any error on stderr.
int commandLineMain(int argc, char** argv);

// `shardc compile MODEL FLAGS...` and `shardc run FLAGS...` (`args` from the command on)
// parsed into options with the command line's own checks; a usage error throws Error with
// its message. The options record `shardc ARGS` as their command line.
CompileOptions parseCompileCommand(const std::vector<std::string>& args);
RunOptions parseRunCommand(const std::vector<std::string>& args);

} // namespace shardc
