#include "shardc/sharding/Annotations.h"

#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Printer.h"
#include "shardc/support/Error.h"

namespace shardc {
namespace {

// What an annotation is attached to, as errors name it: "%w" or "result y of @main".
std::string subject(const ShardingAnnotation& a) {
  if (a.value) return "%" + printName(a.value->name());
  return "result " + printName(a.func->results()[a.result].name) + " of @" +
         printName(a.func->name());
}

} // namespace

ShardingPlan planFromAnnotations(const ParsedAnnotations& annotations, DiagEngine& diags) {
  Mesh mesh;
  if (!annotations.mesh.empty()) {
    try {
      mesh = Mesh::parse(annotations.mesh);
    } catch (const Error& e) {
      diags.error(annotations.meshLoc, e.what());
      return {};
    }
  } else if (!annotations.shardings.empty()) {
    const ShardingAnnotation& a = annotations.shardings.front();
    diags.error(a.loc, "sharding of " + subject(a) +
                           " needs a mesh: declare one before the functions, e.g. "
                           "'mesh data=2, model=2'");
    return {};
  }
  ShardingPlan plan(mesh);
  for (const ShardingAnnotation& a : annotations.shardings) {
    const Value* v = a.value ? a.value : a.func->results()[a.result].value;
    TensorSharding s;
    try {
      s = parseSharding(a.text);
    } catch (const Error& e) {
      diags.error(a.loc, "sharding of " + subject(a) + ": " + e.what());
      continue;
    }
    if (std::string err = checkSharding(s, v->type(), mesh); !err.empty()) {
      diags.error(a.loc, "sharding of " + subject(a) + ": " + err);
      continue;
    }
    if (a.value)
      plan.set(v, std::move(s), {OriginKind::User, ""});
    else
      plan.setResult(*a.func, a.result, std::move(s), {OriginKind::User, ""});
  }
  return plan;
}

std::string meshDeclaration(const Mesh& mesh) {
  std::string s = "mesh ";
  for (size_t i = 0; i < mesh.axes().size(); ++i)
    s += (i ? ", " : "") + mesh.axes()[i].name + "=" + std::to_string(mesh.axes()[i].size);
  return s;
}

std::string printShardedModule(const Module& m, const ShardingPlan& plan) {
  PrintOptions o;
  if (!plan.mesh().axes().empty()) o.meshLine = meshDeclaration(plan.mesh());
  auto annotation = [](const ValueSharding* s) {
    return s ? "sharding " + s->sharding.str() : std::string();
  };
  o.annotate = [&](const Value& v) { return annotation(plan.find(&v)); };
  o.annotateResult = [&](const Function& f, size_t i) { return annotation(plan.findResult(f, i)); };
  return printModule(m, o);
}

std::string printShardingOrigins(const Function& f, const ShardingPlan& plan) {
  std::string out;
  auto line = [&](const std::string& what, const ValueSharding* s) {
    if (s) out += what + ": " + s->sharding.str() + "  <- " + s->origin.str() + "\n";
  };
  for (size_t i = 0; i < f.numArguments(); ++i)
    line("%" + printName(f.argument(i)->name()), plan.find(f.argument(i)));
  for (const auto& op : f.ops())
    for (size_t i = 0; i < op->numResults(); ++i)
      line("%" + printName(op->result(i)->name()), plan.find(op->result(i)));
  for (size_t i = 0; i < f.results().size(); ++i)
    line("result " + printName(f.results()[i].name), plan.findResult(f, i));
  return out;
}

} // namespace shardc
