// Shardings in the text IR: a plan from the parser's `mesh` declaration and `sharding [...]`
// annotations, and the module printed back with them.
#pragma once

#include "shardc/ir/Parser.h"
#include "shardc/sharding/Plan.h"

#include <string>

namespace shardc {
class DiagEngine;

// Checks every annotation against its value's type and the mesh; errors name the value and
// point at the annotation. Annotated values and results get OriginKind::User.
// The plan is meaningful only when no error was reported.
ShardingPlan planFromAnnotations(const ParsedAnnotations& annotations, DiagEngine& diags);

// "mesh data=2, model=2".
std::string meshDeclaration(const Mesh& mesh);

// The module with the plan's mesh and every sharding the plan holds; parsing it and calling
// planFromAnnotations gives the same shardings back.
std::string printShardedModule(const Module& m, const ShardingPlan& plan);

// One line per sharded value, arguments first, then ops in program order, then results:
// "%y: [{data}, {}]  <- propagated from matmul %x (operand 0)".
std::string printShardingOrigins(const Function& f, const ShardingPlan& plan);

} // namespace shardc
