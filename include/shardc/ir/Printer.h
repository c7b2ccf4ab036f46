// The text form of the IR. print(parse(print(m))) == print(m) for every module.
#pragma once

#include <functional>
#include <string>

namespace shardc {
class Module;
class Function;
class Value;
class Attr;

// Hooks for what the IR itself does not hold, such as shardings. An annotation is printed
// after the type it belongs to ("sharding [{data}, {}]"); "" prints nothing.
struct PrintOptions {
  std::string meshLine; // printed before the functions, e.g. "mesh data=2, model=2"
  std::function<std::string(const Value&)> annotate;
  std::function<std::string(const Function&, size_t result)> annotateResult;
  // Told each value's name as printed (without the %), before anything is printed.
  std::function<void(const Value&, const std::string&)> named;
};

std::string printModule(const Module& m, const PrintOptions& options = {});
std::string printFunction(const Function& f, const PrintOptions& options = {});
std::string printAttr(const Attr& a);
// A value, function or result name as the text IR writes it: bare when it is an identifier
// or a number, double-quoted with escapes otherwise.
std::string printName(const std::string& name);

} // namespace shardc
