// A call step: runs its hypersection body's bound plan on the caller's buffers. The body's
// arguments are the call's operands where the caller keeps them, its untied results are
// written into the call's result buffers, and a result the body updates in place is left in
// its argument's buffer (the caller's plan homes that call result there).
#include "Kernel.h"

#include "shardc/exec/CompiledFunction.h"
#include "shardc/ir/IR.h"
#include "shardc/support/Error.h"

namespace shardc {
namespace {

class CallKernel : public Kernel {
public:
  CallKernel(CompiledFunction& body, std::vector<int64_t> args, std::vector<int64_t> results)
      : body_(body), args_(std::move(args)), results_(std::move(results)), argPtrs_(args_.size()),
        resultPtrs_(results_.size()) {}

  void run(ExecContext& ctx) override {
    for (size_t i = 0; i < args_.size(); ++i)
      argPtrs_[i] = ctx.ptr[static_cast<size_t>(args_[i])];
    for (size_t i = 0; i < results_.size(); ++i)
      resultPtrs_[i] = ctx.ptr[static_cast<size_t>(results_[i])];
    body_.runCall(argPtrs_, resultPtrs_, ctx.comm);
  }

private:
  CompiledFunction& body_;
  std::vector<int64_t> args_, results_; // value ids in the caller
  std::vector<uint8_t*> argPtrs_, resultPtrs_;
};

} // namespace

std::unique_ptr<Kernel> bindCall(const BindArgs& a) {
  const Op& call = a.anchor();
  const std::string& callee = call.attrs().getString("callee");
  auto it = a.bodies ? a.bodies->find(callee) : decltype(a.bodies->end()){};
  if (!a.bodies || it == a.bodies->end())
    throw Error("the plan calls @" + callee + ", which has no plan of its own");
  std::vector<int64_t> args, results;
  for (const Value* v : call.operands())
    args.push_back(a.num.id(v));
  for (size_t r = 0; r < call.numResults(); ++r)
    results.push_back(a.num.id(call.result(r)));
  return std::make_unique<CallKernel>(*it->second, std::move(args), std::move(results));
}

} // namespace shardc
