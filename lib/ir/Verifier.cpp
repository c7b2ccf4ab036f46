#include "shardc/ir/Verifier.h"

#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Scan.h"
#include "shardc/ops/OpRegistry.h"

#include <unordered_set>

namespace shardc {

std::string verifyOpSignature(const OpDef& def, const std::vector<TensorType>& operands,
                              AttrDict& attrs, const std::vector<TensorType>& declared) {
  std::vector<TensorType> inferred;
  std::string err = checkOp(def, operands, attrs, inferred);
  if (!err.empty() || def.callsFunction) return err;
  if (inferred.size() != declared.size())
    return "has " + std::to_string(inferred.size()) + " result" +
           (inferred.size() == 1 ? "" : "s") + ", but " + std::to_string(declared.size()) +
           (declared.size() == 1 ? " is" : " are") + " declared";
  for (size_t i = 0; i < inferred.size(); ++i)
    if (inferred[i] != declared[i])
      return "result " + std::to_string(i) + " is declared " + declared[i].str() +
             ", but the shape rule gives " + inferred[i].str();
  return "";
}

namespace {

// A scan's operands and results against its callee (layout in shardc/ir/Scan.h).
std::string checkScanTypes(const Op& scan, const Function& callee, const std::string& name) {
  ScanLayout l = ScanLayout::of(scan);
  if (l.length < 1) return "has length " + std::to_string(l.length) + "; it must be at least 1";
  if (scan.attrs().getInt("carried") < 0 || scan.attrs().getInt("shared") < 0 ||
      l.carried + l.shared > scan.numOperands())
    return "has " + std::to_string(scan.numOperands()) + " operands, fewer than its carried (" +
           std::to_string(scan.attrs().getInt("carried")) + ") and shared (" +
           std::to_string(scan.attrs().getInt("shared")) + ") values";
  if (callee.numArguments() != scan.numOperands())
    return "has " + std::to_string(scan.numOperands()) + " operands; " + name + " takes " +
           std::to_string(callee.numArguments()) + " arguments";
  if (callee.results().size() < l.carried)
    return "carries " + std::to_string(l.carried) + " values; " + name + " returns only " +
           std::to_string(callee.results().size());
  size_t ys = callee.results().size() - l.carried;
  size_t expected = l.carried + ys + (l.saveCarries ? l.carried : 0);
  if (scan.numResults() != expected)
    return "has " + std::to_string(scan.numResults()) + " results; its layout over " + name +
           " makes " + std::to_string(expected);
  for (size_t i = 0; i < scan.numOperands(); ++i) {
    TensorType want = callee.argument(i)->type();
    if (i >= l.firstX()) want = stackedType(l.length, want);
    if (scan.operand(i)->type() != want)
      return "operand " + std::to_string(i) + " is " + scan.operand(i)->type().str() + ", but " +
             name + " takes " + callee.argument(i)->type().str() +
             (i >= l.firstX() ? " per step (so " + want.str() + " stacked)" : "");
  }
  for (const FuncResult& r : callee.results())
    if (r.tiedArg >= 0)
      return "runs " + name + ", whose result '" + r.name + "' is tied to an argument";
  for (size_t i = 0; i < l.carried; ++i)
    if (callee.results()[i].value->type() != callee.argument(i)->type())
      return "carries operand " + std::to_string(i) + " as " + callee.argument(i)->type().str() +
             ", but " + name + " returns " + callee.results()[i].value->type().str() + " for it";
  for (size_t i = 0; i < scan.numResults(); ++i) {
    TensorType want = i < l.carried ? callee.results()[i].value->type()
                      : i < l.carried + ys
                          ? stackedType(l.length, callee.results()[i].value->type())
                          : stackedType(l.length, callee.argument(i - l.carried - ys)->type());
    if (scan.result(i)->type() != want)
      return "result " + std::to_string(i) + " is declared " + scan.result(i)->type().str() +
             ", but its layout over " + name + " makes " + want.str();
  }
  return "";
}

// A call's callee: another function of the module, calling nothing itself (no recursion),
// whose arguments and results match the call's operands and results.
std::string checkCall(const Function& f, const Op& call) {
  const Function* callee = f.module() ? f.module()->callee(call) : nullptr;
  std::string name = "@" + call.attrs().getString("callee");
  if (!callee) return "calls " + name + ", which the module does not define";
  if (callee == &f) return "calls its own function " + name;
  for (const auto& op : callee->ops())
    if (op->def().callsFunction) return "calls " + name + ", which makes calls itself";
  if (isScan(call)) return checkScanTypes(call, *callee, name);
  if (callee->numArguments() != call.numOperands() || callee->results().size() != call.numResults())
    return "has " + std::to_string(call.numOperands()) + " operands and " +
           std::to_string(call.numResults()) + " results; " + name + " takes " +
           std::to_string(callee->numArguments()) + " arguments and returns " +
           std::to_string(callee->results().size());
  for (size_t i = 0; i < call.numOperands(); ++i)
    if (call.operand(i)->type() != callee->argument(i)->type())
      return "operand " + std::to_string(i) + " is " + call.operand(i)->type().str() + ", but " +
             name + " takes " + callee->argument(i)->type().str();
  for (size_t i = 0; i < call.numResults(); ++i)
    if (call.result(i)->type() != callee->results()[i].value->type())
      return "result " + std::to_string(i) + " is declared " + call.result(i)->type().str() +
             ", but " + name + " returns " + callee->results()[i].value->type().str();
  return "";
}

} // namespace

bool verifyFunction(const Function& f, DiagEngine& diags) {
  size_t before = diags.diagnostics().size();
  std::unordered_set<const Value*> defined;
  std::unordered_set<std::string> argNames;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Value* a = f.argument(i);
    if (a->name().empty())
      diags.error(f.loc(), "argument " + std::to_string(i) + " of @" + f.name() + " has no name");
    else if (!argNames.insert(a->name()).second)
      diags.error(f.loc(), "argument name '" + a->name() + "' is used twice in @" + f.name());
    if (!checkedNumel(a->type().shape))
      diags.error(f.loc(), "argument '" + a->name() + "' has an invalid shape");
    defined.insert(a);
  }
  for (const auto& op : f.ops()) {
    std::vector<TensorType> operandTypes, declared;
    bool ok = true;
    for (size_t i = 0; i < op->numOperands(); ++i) {
      if (!defined.count(op->operand(i))) {
        diags.error(op->loc(), "'" + op->name() + "' op operand " + std::to_string(i) +
                                   " is used before it is defined");
        ok = false;
      }
      operandTypes.push_back(op->operand(i)->type());
    }
    for (size_t i = 0; i < op->numResults(); ++i)
      declared.push_back(op->result(i)->type());
    AttrDict attrs = op->attrs();
    std::string err = ok ? verifyOpSignature(op->def(), operandTypes, attrs, declared) : "";
    if (err.empty() && ok && op->def().callsFunction) err = checkCall(f, *op);
    if (!err.empty())
      diags.error(op->loc(), "'" + op->name() + "' op " + err);
    else if (ok && !(attrs == op->attrs()))
      diags.error(op->loc(), "'" + op->name() + "' op is missing defaulted attributes");
    for (size_t i = 0; i < op->numResults(); ++i)
      defined.insert(op->result(i));
  }
  std::unordered_set<std::string> resultNames;
  std::unordered_set<int64_t> tied;
  for (const auto& r : f.results()) {
    if (r.tiedArg < 0) continue;
    if (r.tiedArg >= static_cast<int64_t>(f.numArguments())) {
      diags.error(f.loc(), "result '" + r.name + "' is tied to a missing argument");
      continue;
    }
    const Value* a = f.argument(static_cast<size_t>(r.tiedArg));
    if (a->argKind() == ArgKind::Input)
      diags.error(f.loc(), "result '" + r.name + "' is tied to input '" + a->name() +
                               "'; only param and opt_state arguments are updated in place");
    else if (a->type() != r.value->type())
      diags.error(f.loc(), "result '" + r.name + "' has type " + r.value->type().str() +
                               " but is tied to '" + a->name() + "' of type " + a->type().str());
    if (!tied.insert(r.tiedArg).second)
      diags.error(f.loc(), "argument '" + a->name() + "' is tied to more than one result");
  }
  if (f.results().empty()) diags.error(f.loc(), "@" + f.name() + " returns nothing");
  for (const auto& r : f.results()) {
    if (r.name.empty())
      diags.error(f.loc(), "a result of @" + f.name() + " has no name");
    else if (!resultNames.insert(r.name).second)
      diags.error(f.loc(), "result name '" + r.name + "' is used twice in @" + f.name());
    if (!defined.count(r.value))
      diags.error(f.loc(), "result '" + r.name + "' of @" + f.name() + " is not defined");
  }
  return diags.diagnostics().size() == before;
}

bool verifyModule(const Module& m, DiagEngine& diags) {
  bool ok = true;
  std::unordered_set<std::string> names;
  for (const auto& f : m.functions()) {
    if (!names.insert(f->name()).second) {
      diags.error(f->loc(), "function @" + f->name() + " is defined twice");
      ok = false;
    }
    ok &= verifyFunction(*f, diags);
  }
  return ok;
}

} // namespace shardc
