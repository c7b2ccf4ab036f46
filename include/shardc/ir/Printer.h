// The text form of the IR. print(parse(print(m))) == print(m) for every module.
#pragma once

#include <string>

namespace shardc {
class Module;
class Function;
class Attr;

std::string printModule(const Module& m);
std::string printFunction(const Function& f);
std::string printAttr(const Attr& a);

} // namespace shardc
