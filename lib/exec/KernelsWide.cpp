// Elementwise ops outside the f32 lanes (f64, f16, bf16, integers, i1): one op per step, each
// element in the widest type of its family through the op's own element function (the one
// its reference kernel applies), with numpy broadcasting. These are small: step counters,
// index arithmetic, one-hot labels, the optimizer's f64 scalars.
#include "Kernel.h"

#include "shardc/ir/IR.h"
#include "shardc/ir/Tensor.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"

#include <cstring>
#include <set>

namespace shardc {
namespace {

// Element strides of `in` read at every position of `out` under numpy broadcasting.
std::vector<int64_t> broadcastStrides(const Shape& out, const Shape& in) {
  std::vector<int64_t> s(out.size(), 0);
  int64_t acc = 1;
  for (size_t d = in.size(); d-- > 0;) {
    size_t od = out.size() - in.size() + d;
    s[od] = in[d] == 1 ? 0 : acc;
    acc *= in[d];
  }
  return s;
}

enum class Kind { Unary, Binary, Compare, Where, Cast };

class WideKernel : public Kernel {
public:
  explicit WideKernel(const BindArgs& a) : op_(a.anchor()) {
    const std::string& n = op_.name();
    kind_ = n == "compare"           ? Kind::Compare
            : n == "where"           ? Kind::Where
            : n == "cast"            ? Kind::Cast
            : op_.numOperands() == 1 ? Kind::Unary
                                     : Kind::Binary;
    out_ = op_.result(0)->type();
    for (const Value* v : op_.operands()) {
      ids_.push_back(a.num.id(v));
      types_.push_back(v->type().dtype);
      strides_.push_back(broadcastStrides(out_.shape, v->type().shape));
    }
    resultId_ = a.num.id(op_.result(0));
    // Floats compute in double, integers and i1 in int64, as the reference kernels do.
    DType in = op_.operand(kind_ == Kind::Where ? 1 : 0)->type().dtype;
    floatDomain_ = isFloat(in);
    if (kind_ == Kind::Compare) direction_ = op_.attrs().getString("direction");
  }

  void run(ExecContext& ctx) override {
    try {
      runElements(ctx);
    } catch (const Error& e) { // integer division by zero
      std::string where = op_.loc().line ? " at line " + std::to_string(op_.loc().line) : "";
      throw Error("'" + op_.name() + "' op" + where + ": " + e.what());
    }
  }

private:
  void runElements(ExecContext& ctx) {
    int64_t n = out_.numel();
    size_t rank = out_.shape.size();
    std::vector<int64_t> idx(rank, 0), off(ids_.size(), 0);
    std::vector<const uint8_t*> in;
    for (int64_t id : ids_)
      in.push_back(ctx.ptr[static_cast<size_t>(id)]);
    uint8_t* y = ctx.ptr[static_cast<size_t>(resultId_)];
    const ElementFns& e = op_.def().element;
    for (int64_t i = 0; i < n; ++i) {
      switch (kind_) {
      case Kind::Unary:
        if (floatDomain_)
          storeDouble(y, out_.dtype, i, e.unaryF(loadDouble(in[0], types_[0], off[0])));
        else
          storeInt(y, out_.dtype, i, e.unaryI(loadInt(in[0], types_[0], off[0])));
        break;
      case Kind::Binary:
        if (floatDomain_)
          storeDouble(y, out_.dtype, i,
                      e.binaryF(loadDouble(in[0], types_[0], off[0]),
                                loadDouble(in[1], types_[1], off[1])));
        else
          storeInt(y, out_.dtype, i,
                   e.binaryI(loadInt(in[0], types_[0], off[0]), loadInt(in[1], types_[1], off[1])));
        break;
      case Kind::Compare:
        storeInt(y, out_.dtype, i,
                 floatDomain_ ? compare(loadDouble(in[0], types_[0], off[0]),
                                        loadDouble(in[1], types_[1], off[1]))
                              : compare(loadInt(in[0], types_[0], off[0]),
                                        loadInt(in[1], types_[1], off[1])));
        break;
      case Kind::Where: {
        size_t pick = loadInt(in[0], types_[0], off[0]) ? 1 : 2;
        size_t es = dtypeSize(out_.dtype);
        std::memcpy(y + static_cast<size_t>(i) * es, in[pick] + static_cast<size_t>(off[pick]) * es,
                    es);
        break;
      }
      case Kind::Cast: // as the reference cast: floats through double, the rest through int64
        if (isFloat(out_.dtype))
          storeDouble(y, out_.dtype, i, loadDouble(in[0], types_[0], off[0]));
        else if (isFloat(types_[0]) && isBool(out_.dtype))
          storeInt(y, out_.dtype, i, loadDouble(in[0], types_[0], off[0]) != 0.0);
        else
          storeInt(y, out_.dtype, i, loadInt(in[0], types_[0], off[0]));
        break;
      }
      // Odometer over the result's index space, moving every operand's offset along.
      for (size_t d = rank; d-- > 0;) {
        for (size_t k = 0; k < off.size(); ++k)
          off[k] += strides_[k][d];
        if (++idx[d] < out_.shape[d]) break;
        for (size_t k = 0; k < off.size(); ++k)
          off[k] -= strides_[k][d] * out_.shape[d];
        idx[d] = 0;
      }
    }
  }

  template <typename T> int64_t compare(T a, T b) const {
    const std::string& d = direction_;
    return d == "eq"   ? a == b
           : d == "ne" ? a != b
           : d == "lt" ? a < b
           : d == "le" ? a <= b
           : d == "gt" ? a > b
                       : a >= b;
  }

  const Op& op_;
  Kind kind_;
  TensorType out_;
  std::vector<int64_t> ids_;
  std::vector<DType> types_;
  std::vector<std::vector<int64_t>> strides_;
  int64_t resultId_ = -1;
  bool floatDomain_ = true;
  std::string direction_;
};

} // namespace

bool hasWideKernel(const Op& op) {
  static const std::set<std::string_view> kSpecial = {"compare", "where", "cast"};
  if (op.numResults() != 1) return false;
  if (kSpecial.count(op.name())) return true;
  const ElementFns& e = op.def().element;
  bool fl = isFloat(op.operand(0)->type().dtype);
  return op.numOperands() == 1 ? (fl ? e.unaryF != nullptr : e.unaryI != nullptr)
                               : (fl ? e.binaryF != nullptr : e.binaryI != nullptr);
}

std::unique_ptr<Kernel> bindWide(const BindArgs& a) {
  if (a.ops.size() != 1 || !hasWideKernel(a.anchor())) return nullptr;
  return std::make_unique<WideKernel>(a);
}

} // namespace shardc
