// Which native kernel runs a step, and the registry-kernel adapter (reference fallback and
// collectives, whose kernels move tensors between devices).
#include "Fusion.h"
#include "Kernel.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"

#include <algorithm>
#include <cstring>

namespace shardc {
namespace {

// The native kernel families besides the elementwise ones (the lane kernels' table in
// KernelsElementwise.cpp, and the wide kernels of every op with element functions): the kernels
// (op names) each binds and the element types it takes. Binding (bindKernel) and planning
// (hasNativeKernel) read this table; KernelCoverageTest checks every registry op is in one or
// runs its reference kernel.
enum class Types { Any, F32, F32OrBf16 };
struct Family {
  std::string_view name;
  std::unique_ptr<Kernel> (*bind)(const BindArgs&);
  Types types;
  std::vector<std::string_view> kernels;
  // A step may hold more ops than its anchor (transposes, prologues, epilogues); only matmul's
  // anchor may be another op than the one the kernel is named after (its epilogue).
  bool fusesOps = false, anchorMayDiffer = false;
  size_t typedOperand = 0; // the operand whose element type decides (scatter_add: the updates)
};
const Family kFamilies[] = {
    {"matmul", bindMatmul, Types::F32OrBf16, {opname::kMatmul}, true, true},
    {"conv",
     bindConv,
     Types::F32OrBf16,
     {opname::kConv2d, opname::kConv2dBackwardInput, opname::kConv2dBackwardFilter}},
    {"row",
     bindNorm,
     Types::F32,
     {opname::kSoftmax, opname::kLogSoftmax, opname::kLayerNorm},
     true},
    {"reduce",
     bindReduce,
     Types::F32,
     {opname::kReduceSum, opname::kReduceMean, opname::kReduceMax, opname::kReduceMin},
     true},
    {"shape",
     bindShape,
     Types::Any,
     {opname::kTranspose, opname::kBroadcast, opname::kSlice, opname::kReverse, opname::kConcat,
      opname::kSplit, opname::kPad, opname::kReshape}},
    {"index", bindIndex, Types::Any, {opname::kGather}},
    {"index", bindIndex, Types::F32, {opname::kScatterAdd}, false, false, 1},
    {"pool",
     bindPool,
     Types::F32,
     {opname::kMaxPool2d, opname::kAvgPool2d, opname::kMaxPool2dBackward,
      opname::kAvgPool2dBackward}},
    {"random", bindRandom, Types::F32, {opname::kDropout}},
};

const Family* familyOf(std::string_view kernel) {
  for (const Family& f : kFamilies)
    if (std::find(f.kernels.begin(), f.kernels.end(), kernel) != f.kernels.end()) return &f;
  return nullptr;
}

class RegistryKernel : public Kernel {
public:
  explicit RegistryKernel(const BindArgs& a) : op_(a.anchor()) {
    for (const Value* v : op_.operands())
      inputs_.push_back(a.num.id(v));
    for (size_t r = 0; r < op_.numResults(); ++r)
      results_.push_back(a.num.id(op_.result(r)));
  }
  void run(ExecContext& ctx) override {
    std::vector<Tensor> in;
    in.reserve(inputs_.size());
    for (size_t i = 0; i < inputs_.size(); ++i) {
      in.emplace_back(op_.operand(i)->type());
      if (in.back().byteSize())
        std::memcpy(in.back().data(), ctx.ptr[static_cast<size_t>(inputs_[i])],
                    in.back().byteSize());
    }
    std::vector<const Tensor*> ptrs;
    for (const Tensor& t : in)
      ptrs.push_back(&t);
    std::vector<TensorType> types;
    for (size_t r = 0; r < op_.numResults(); ++r)
      types.push_back(op_.result(r)->type());
    std::vector<Tensor> out = op_.def().kernel(KernelArgs{ptrs, op_.attrs(), types, ctx.comm});
    for (size_t r = 0; r < out.size(); ++r)
      if (uint8_t* p = ctx.ptr[static_cast<size_t>(results_[r])]; p && out[r].byteSize())
        std::memcpy(p, out[r].data(), out[r].byteSize());
  }

private:
  const Op& op_;
  std::vector<int64_t> inputs_, results_;
};

} // namespace

bool BindArgs::stored(const Value* v) const {
  return plan.values[static_cast<size_t>(num.id(v))].home != ValueHome::Fused;
}

std::unique_ptr<Kernel> bindRegistryKernel(const BindArgs& a) {
  if (a.ops.size() != 1)
    throw Error("step '" + a.step.kernel + "' runs " + std::to_string(a.ops.size()) +
                " ops through a reference kernel, which runs one");
  return std::make_unique<RegistryKernel>(a);
}

std::vector<Tensor> runRegistryKernel(const Op& op, const std::vector<const Tensor*>& inputs) {
  std::vector<TensorType> types;
  for (size_t r = 0; r < op.numResults(); ++r)
    types.push_back(op.result(r)->type());
  try {
    return op.def().kernel(KernelArgs{inputs, op.attrs(), types, nullptr});
  } catch (const Error& e) {
    throw opError(op, e);
  }
}

std::unique_ptr<Kernel> bindKernel(const BindArgs& a) {
  if (a.anchor().def().callsFunction) return bindCall(a);
  if (a.step.reference || a.anchor().def().communicates) return bindRegistryKernel(a);
  if (auto k = bindElementwise(a)) return k;
  if (auto k = bindWide(a)) return k;
  const Family* f = familyOf(a.step.kernel);
  if (f && (f->fusesOps || a.ops.size() == 1) &&
      (f->anchorMayDiffer || a.anchor().name() == a.step.kernel))
    if (auto k = f->bind(a)) return k;
  throw Error("no native kernel '" + a.step.kernel + "' for op '" + a.anchor().name() +
              "' (a plan from another shardc version? recompile the model)");
}

} // namespace shardc

namespace shardc {

std::string_view nativeKernelFamily(const OpDef& def) {
  if (def.communicates) return "collective";
  if (def.callsFunction) return "call";
  if (isLaneOpName(def.name) || def.name == opname::kIota) return "lanes";
  for (const Family& f : kFamilies)
    if (std::find(f.kernels.begin(), f.kernels.end(), def.name) != f.kernels.end()) return f.name;
  const ElementFns& e = def.element;
  if (e.unaryF || e.unaryI || e.binaryF || e.binaryI) return "wide";
  return "";
}

bool hasNativeKernel(std::string_view kernel, const Op& anchor) {
  if (anchor.def().communicates || anchor.def().callsFunction || kernel == "fused_elementwise" ||
      isLaneOp(anchor) || hasWideKernel(anchor))
    return true;
  const Family* f = familyOf(kernel);
  if (!f) return false;
  if (f->types == Types::Any) return true;
  // A forged plan may name a kernel after another op of its step than the anchor.
  if (anchor.numOperands() <= f->typedOperand || anchor.numResults() == 0) return false;
  // oneDNN refuses zero-sized dims; such steps are cheap anyway.
  bool empty = anchor.result(0)->type().numel() == 0;
  for (const Value* v : anchor.operands())
    empty |= v->type().numel() == 0;
  DType t = anchor.operand(f->typedOperand)->type().dtype;
  return (t == DType::F32 || (t == DType::BF16 && f->types == Types::F32OrBf16)) && !empty;
}

} // namespace shardc
