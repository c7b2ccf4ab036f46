// Which native kernel runs a step, and the registry-kernel adapter (reference fallback and
// collectives, whose kernels move tensors between devices).
#include "Fusion.h"
#include "Kernel.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"

#include <cstring>
#include <set>

namespace shardc {
namespace {

using Binder = std::unique_ptr<Kernel> (*)(const BindArgs&);
const Binder kFamilies[] = {bindElementwise, bindWide,  bindMatmul, bindConv, bindNorm,
                            bindReduce,      bindShape, bindIndex,  bindPool, bindRandom};

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
  for (Binder b : kFamilies)
    if (auto k = b(a)) return k;
  throw Error("no native kernel '" + a.step.kernel + "' for op '" + a.anchor().name() +
              "' (a plan from another shardc version? recompile the model)");
}

} // namespace shardc

namespace shardc {

bool hasNativeKernel(std::string_view kernel, const Op& anchor) {
  static const std::set<std::string_view> kAnyType = {
      "transpose", "broadcast", "slice", "reverse", "concat", "split", "pad", "reshape", "gather"};
  static const std::set<std::string_view> kFloat = {"matmul",
                                                    "conv2d",
                                                    "conv2d_backward_input",
                                                    "conv2d_backward_filter",
                                                    "softmax",
                                                    "log_softmax",
                                                    "layer_norm",
                                                    "reduce_sum",
                                                    "reduce_mean",
                                                    "reduce_max",
                                                    "reduce_min",
                                                    "scatter_add",
                                                    "max_pool2d",
                                                    "avg_pool2d",
                                                    "max_pool2d_backward",
                                                    "avg_pool2d_backward",
                                                    "dropout"};
  if (anchor.def().communicates || anchor.def().callsFunction || kernel == "fused_elementwise" ||
      isLaneOp(anchor))
    return true;
  if (kAnyType.count(kernel) || hasWideKernel(anchor)) return true;
  // A forged plan may name a kernel after another op of its step than the anchor.
  size_t typed = kernel == "scatter_add" ? 1 : 0;
  if (anchor.numOperands() <= typed || anchor.numResults() == 0) return false;
  DType t = anchor.operand(typed)->type().dtype;
  // oneDNN refuses zero-sized dims; such steps are cheap anyway.
  bool empty = anchor.result(0)->type().numel() == 0;
  for (const Value* v : anchor.operands())
    empty |= v->type().numel() == 0;
  return kFloat.count(kernel) && t == DType::F32 && !empty;
}

} // namespace shardc
