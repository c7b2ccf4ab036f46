// A call step: runs its hypersection body's bound plan on the caller's buffers. The body's
// arguments are the call's operands where the caller keeps them, its untied results are
// written into the call's result buffers, and a result the body updates in place is left in
// its argument's buffer (the caller's plan homes that call result there).
// A scan step runs its body once per step on the caller's buffers too: slice i of a stacked
// operand or result is read or written where it lies, and the carried values pass between
// steps through two buffers of the step's scratch (or, saved, through the stacked result).
#include "Kernel.h"

#include "shardc/exec/CompiledFunction.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Scan.h"
#include "shardc/support/Error.h"

#include <cstring>

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

class ScanKernel : public Kernel {
public:
  ScanKernel(CompiledFunction& body, const Op& scan, const ValueNumbering& num)
      : body_(body), l_(ScanLayout::of(scan)) {
    const Function& callee = body.function();
    for (size_t k = 0; k < scan.numOperands(); ++k) {
      args_.push_back(num.id(scan.operand(k)));
      argBytes_.push_back(static_cast<size_t>(callee.argument(k)->type().bytes()));
    }
    for (size_t r = 0; r < scan.numResults(); ++r)
      results_.push_back(num.id(scan.result(r)));
    for (size_t r = 0; r < callee.results().size(); ++r)
      resultBytes_.push_back(static_cast<size_t>(callee.results()[r].value->type().bytes()));
    // The carried values between steps: two buffers each in the step's scratch (64-byte
    // aligned), unless they pass through the saved stack.
    for (size_t c = 0; c < l_.carried && !l_.saveCarries && l_.length > 1; ++c) {
      carryOffset_.push_back(scratch_);
      carryStride_.push_back((argBytes_[c] + 63) / 64 * 64);
      scratch_ += 2 * static_cast<int64_t>(carryStride_.back());
    }
    argPtrs_.resize(args_.size());
    resultPtrs_.resize(resultBytes_.size());
  }

  int64_t scratchBytes() const override { return scratch_; }

  void run(ExecContext& ctx) override {
    auto at = [&](int64_t id) { return ctx.ptr[static_cast<size_t>(id)]; };
    for (size_t c = 0; c < l_.carried; ++c)
      argPtrs_[c] = at(args_[c]);
    for (size_t k = l_.carried; k < l_.firstX(); ++k)
      argPtrs_[k] = at(args_[k]);
    for (int64_t i = 0; i < l_.length; ++i) {
      auto s = static_cast<size_t>(l_.step(i));
      bool last = i == l_.length - 1;
      for (size_t k = l_.firstX(); k < args_.size(); ++k)
        argPtrs_[k] = at(args_[k]) + s * argBytes_[k];
      for (size_t y = 0; y < l_.ys; ++y)
        resultPtrs_[l_.carried + y] =
            at(results_[l_.firstY() + y]) + s * resultBytes_[l_.carried + y];
      for (size_t c = 0; c < l_.carried; ++c) {
        if (l_.saveCarries) {
          uint8_t* saved = at(results_[l_.firstSaved() + c]);
          if (i == 0) std::memcpy(saved + s * argBytes_[c], argPtrs_[c], argBytes_[c]);
          argPtrs_[c] = saved + s * argBytes_[c];
          resultPtrs_[c] =
              last ? at(results_[c]) : saved + static_cast<size_t>(l_.step(i + 1)) * argBytes_[c];
        } else {
          resultPtrs_[c] =
              last ? at(results_[c])
                   : ctx.scratch + carryOffset_[c] + static_cast<size_t>(i % 2) * carryStride_[c];
        }
      }
      body_.runCall(argPtrs_, resultPtrs_, ctx.comm);
      for (size_t c = 0; c < l_.carried; ++c)
        argPtrs_[c] = resultPtrs_[c];
    }
  }

private:
  CompiledFunction& body_;
  ScanLayout l_;
  std::vector<int64_t> args_, results_;        // value ids in the caller
  std::vector<size_t> argBytes_, resultBytes_; // per step, of the body's arguments and results
  std::vector<int64_t> carryOffset_;           // in the scratch
  std::vector<size_t> carryStride_;            // from one carry buffer to the other
  int64_t scratch_ = 0;
  std::vector<uint8_t*> argPtrs_, resultPtrs_;
};

} // namespace

std::unique_ptr<Kernel> bindCall(const BindArgs& a) {
  const Op& call = a.anchor();
  const std::string& callee = call.attrs().getString("callee");
  auto it = a.bodies ? a.bodies->find(callee) : decltype(a.bodies->end()){};
  if (!a.bodies || it == a.bodies->end())
    throw Error("the plan calls @" + callee + ", which has no plan of its own");
  if (isScan(call)) return std::make_unique<ScanKernel>(*it->second, call, a.num);
  std::vector<int64_t> args, results;
  for (const Value* v : call.operands())
    args.push_back(a.num.id(v));
  for (size_t r = 0; r < call.numResults(); ++r)
    results.push_back(a.num.id(call.result(r)));
  return std::make_unique<CallKernel>(*it->second, std::move(args), std::move(results));
}

} // namespace shardc
