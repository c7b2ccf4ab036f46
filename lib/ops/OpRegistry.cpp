#include "shardc/ops/OpRegistry.h"

#include "OpFamilies.h"
#include "shardc/support/Error.h"

namespace shardc {

double OpDef::flopCount(const OpSig& sig, const std::vector<TensorType>& results) const {
  return flops ? flops(sig, results) : 0.0;
}

double OpDef::byteCount(const OpSig& sig, const std::vector<TensorType>& results) const {
  if (bytes) return bytes(sig, results);
  double b = 0;
  for (const auto& t : sig.operands)
    b += static_cast<double>(t.bytes());
  for (const auto& t : results)
    b += static_cast<double>(t.bytes());
  return b;
}

const OpRegistry& OpRegistry::get() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    registerElementwiseOps(r);
    registerMatmulOps(r);
    registerReduceOps(r);
    registerNormOps(r);
    registerShapeOps(r);
    registerIndexOps(r);
    registerConvOps(r);
    registerPoolOps(r);
    registerCollectiveOps(r);
    registerRandomOps(r);
    registerCallOps(r);
    return r;
  }();
  return registry;
}

const OpDef* OpRegistry::lookup(std::string_view name) const {
  for (auto& d : defs_)
    if (d->name == name) return d.get();
  return nullptr;
}

void OpRegistry::add(OpDef def) {
  SHARDC_CHECK(!lookup(def.name), "op '" + def.name + "' registered twice");
  SHARDC_CHECK(def.inferTypes && def.kernel,
               "op '" + def.name + "' needs a shape rule and a kernel");
  defs_.push_back(std::make_unique<OpDef>(std::move(def)));
}

std::string checkOp(const OpDef& def, const std::vector<TensorType>& operands, AttrDict& attrs,
                    std::vector<TensorType>& results) {
  int n = static_cast<int>(operands.size());
  if (n < def.minOperands || (def.maxOperands >= 0 && n > def.maxOperands)) {
    std::string want = def.minOperands == def.maxOperands ? std::to_string(def.minOperands)
                       : def.maxOperands < 0 ? "at least " + std::to_string(def.minOperands)
                                             : std::to_string(def.minOperands) + " to " +
                                                   std::to_string(def.maxOperands);
    bool one = want == "1" || want == "at least 1";
    return "expects " + want + " operand" + (one ? "" : "s") + ", got " + std::to_string(n);
  }
  for (const auto& [name, value] : attrs.entries()) {
    bool known = false;
    for (const auto& spec : def.attrs)
      known |= spec.name == name;
    if (!known) return "has no attribute '" + name + "'";
  }
  for (const auto& spec : def.attrs) {
    const Attr* a = attrs.find(spec.name);
    if (!a) {
      if (!spec.defaultValue) return "requires attribute '" + spec.name + "'";
      attrs.set(spec.name, *spec.defaultValue);
      continue;
    }
    if (a->kind() == spec.kind) continue;
    if (spec.kind == AttrKind::Float && a->kind() == AttrKind::Int) {
      attrs.set(spec.name, static_cast<double>(a->asInt()));
    } else if (spec.kind == AttrKind::Floats && a->kind() == AttrKind::Ints) {
      std::vector<double> f(a->asInts().begin(), a->asInts().end());
      attrs.set(spec.name, std::move(f));
    } else {
      return "attribute '" + spec.name + "' must be " + std::string(attrKindName(spec.kind)) +
             ", got " + std::string(attrKindName(a->kind()));
    }
  }
  results.clear();
  if (def.callsFunction) return ""; // the callee's results, checked against the module
  std::string err = def.inferTypes(OpSig{operands, attrs}, results);
  if (!err.empty()) return err;
  for (const auto& r : results)
    if (!checkedNumel(r.shape)) return "result shape " + shapeStr(r.shape) + " is too large";
  return "";
}

} // namespace shardc
