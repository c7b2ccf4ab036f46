// The IR verifier: every op matches its registry entry and shape rule, every value is
// defined before use, names are unique. Reports each problem as a diagnostic at the op.
#pragma once

#include "shardc/ir/Types.h"

#include <string>
#include <vector>

namespace shardc {
class Module;
class Function;
class DiagEngine;
class AttrDict;
struct OpDef;

// Checks one op: arity, attributes (filling defaults into `attrs`), and that the declared
// result types are those of the shape rule. Returns "" or the message (without op name).
std::string verifyOpSignature(const OpDef& def, const std::vector<TensorType>& operands,
                              AttrDict& attrs, const std::vector<TensorType>& declared);

bool verifyFunction(const Function& f, DiagEngine& diags);
bool verifyModule(const Module& m, DiagEngine& diags);

} // namespace shardc
