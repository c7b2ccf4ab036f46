// Parses the text form of the IR. Errors go to the DiagEngine as file:line:col diagnostics;
// parsing stops at the first one.
#pragma once

#include "shardc/ir/IR.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace shardc {
class DiagEngine;

// A `sharding [...]` annotation as written after a type. The IR does not know meshes, so
// only the syntax is checked here; the sharding library checks the meaning.
struct ShardingAnnotation {
  const Function* func;
  const Value* value; // the annotated argument or op result; nullptr for a function result
  size_t result = 0;  // index of the annotated function result when value is nullptr
  std::string text;   // "[{data}, {}:3] partial{model}", as parseSharding reads it
  Loc loc;            // of the 'sharding' keyword
};

struct ParsedAnnotations {
  std::string mesh; // "data=2,model=2", as Mesh::parse reads it; empty when none is declared
  Loc meshLoc;
  std::vector<ShardingAnnotation> shardings; // in text order
};

// Returns nullptr after reporting an error. Every op is checked against its shape rule
// while parsing (the same check the verifier makes). A `mesh` declaration and sharding
// annotations are parsed and dropped, so every tool reads annotated IR.
std::unique_ptr<Module> parseModule(std::string_view text, DiagEngine& diags);
// Also returns the mesh declaration and sharding annotations (left empty on failure).
std::unique_ptr<Module> parseModule(std::string_view text, DiagEngine& diags,
                                    ParsedAnnotations& annotations);

} // namespace shardc
