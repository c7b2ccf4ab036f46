// Elementwise ops outside the f32 lanes (f64, f16, bf16, integers, i1): one op per step, each
// element in the widest type of its family through the op's own element function (the one
// its reference kernel applies), with numpy broadcasting. Most are small (step counters, index
// arithmetic, one-hot labels, the optimizer's f64 scalars); float64 models run all their
// elementwise ops here, on the step's threads.
#include "Kernel.h"

#include "shardc/ir/IR.h"
#include "shardc/ir/Tensor.h"
#include "shardc/ops/OpNames.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <set>

namespace shardc {
namespace {

enum class Kind { Unary, Binary, Compare, Where, Cast };
// Elements (through one element function call each) below which one thread does them all.
constexpr int64_t kParallelElements = 1 << 14;

// One row of `n` elements, `st` apart from offset `off`, as int64 or double; typed loops for
// the common dtypes, Tensor's conversions (loadInt/loadDouble) for the rest.
template <typename T>
void typedRow(const uint8_t* p, int64_t off, int64_t st, int64_t n, auto* out) {
  const T* q = reinterpret_cast<const T*>(p) + off;
  for (int64_t j = 0; j < n; ++j)
    out[j] = q[j * st];
}
void rowInts(const uint8_t* p, DType t, int64_t off, int64_t st, int64_t n, int64_t* out) {
  switch (t) {
  case DType::I64:
    return typedRow<int64_t>(p, off, st, n, out);
  case DType::I32:
    return typedRow<int32_t>(p, off, st, n, out);
  case DType::I1:
    for (int64_t j = 0; j < n; ++j)
      out[j] = p[off + j * st] != 0;
    return;
  default:
    for (int64_t j = 0; j < n; ++j)
      out[j] = loadInt(p, t, off + j * st);
  }
}
void rowDoubles(const uint8_t* p, DType t, int64_t off, int64_t st, int64_t n, double* out) {
  switch (t) {
  case DType::F64:
    return typedRow<double>(p, off, st, n, out);
  case DType::F32:
    return typedRow<float>(p, off, st, n, out);
  case DType::I64:
    return typedRow<int64_t>(p, off, st, n, out);
  case DType::I32:
    return typedRow<int32_t>(p, off, st, n, out);
  default:
    for (int64_t j = 0; j < n; ++j)
      out[j] = loadDouble(p, t, off + j * st);
  }
}
void storeRowInts(uint8_t* p, DType t, int64_t off, int64_t n, const int64_t* v) {
  switch (t) {
  case DType::I64:
    std::memcpy(p + off * 8, v, static_cast<size_t>(n) * 8);
    return;
  case DType::I1:
    for (int64_t j = 0; j < n; ++j)
      p[off + j] = v[j] != 0;
    return;
  default:
    for (int64_t j = 0; j < n; ++j)
      storeInt(p, t, off + j, v[j]);
  }
}
void storeRowDoubles(uint8_t* p, DType t, int64_t off, int64_t n, const double* v) {
  switch (t) {
  case DType::F64:
    std::memcpy(p + off * 8, v, static_cast<size_t>(n) * 8);
    return;
  case DType::F32:
    for (int64_t j = 0; j < n; ++j)
      reinterpret_cast<float*>(p)[off + j] = static_cast<float>(v[j]);
    return;
  default:
    for (int64_t j = 0; j < n; ++j)
      storeDouble(p, t, off + j, v[j]);
  }
}

class WideKernel : public Kernel {
public:
  explicit WideKernel(const BindArgs& a) : op_(a.anchor()) {
    const std::string& n = op_.name();
    kind_ = n == opname::kCompare    ? Kind::Compare
            : n == opname::kWhere    ? Kind::Where
            : n == opname::kCast     ? Kind::Cast
            : op_.numOperands() == 1 ? Kind::Unary
                                     : Kind::Binary;
    out_ = op_.result(0)->type();
    for (const Value* v : op_.operands()) {
      ids_.push_back(a.num.id(v));
      types_.push_back(v->type().dtype);
      strides_.push_back(broadcastStrides(out_.shape, v->type().shape));
    }
    collapseDims();
    resultId_ = a.num.id(op_.result(0));
    // Floats compute in double, integers and i1 in int64, as the reference kernels do.
    DType in = op_.operand(kind_ == Kind::Where ? 1 : 0)->type().dtype;
    floatDomain_ = isFloat(in);
    if (kind_ == Kind::Compare) {
      const std::string& d = op_.attrs().getString("direction");
      const char* names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
      direction_ = static_cast<int>(std::find(std::begin(names), std::end(names), d) - names);
    }
  }

  void run(ExecContext& ctx) override { runElements(ctx); }

private:
  // Row by row along the last dim: each operand's row loaded into a buffer of the domain's
  // type (one dtype switch per row), the op applied over the buffers, the row stored.
  // i64 compares (one-hot labels): typed loads and the direction outside the loop.
  template <int Dir>
  static void compareRow(const int64_t* a, int64_t sa, const int64_t* b, int64_t sb, uint8_t* y,
                         int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t p = a[j * sa], q = b[j * sb];
      y[j] = Dir == 0   ? p == q
             : Dir == 1 ? p != q
             : Dir == 2 ? p < q
             : Dir == 3 ? p <= q
             : Dir == 4 ? p > q
                        : p >= q;
    }
  }

  // Merges neighbouring dims that every operand walks alike (both broadcast, or contiguous),
  // so that rows run as long as the layout allows: [8,96,32,32] x [1,96,1,1] runs rows of 1024,
  // not 32. The result is row-major either way.
  void collapseDims() {
    shape_ = out_.shape;
    for (size_t d = shape_.size(); d-- > 1;) {
      bool merge = std::all_of(strides_.begin(), strides_.end(),
                               [&](const auto& st) { return st[d - 1] == st[d] * shape_[d]; });
      if (!merge) continue;
      shape_[d - 1] *= shape_[d];
      shape_.erase(shape_.begin() + static_cast<std::ptrdiff_t>(d));
      for (auto& st : strides_)
        st.erase(st.begin() + static_cast<std::ptrdiff_t>(d - 1));
    }
  }

  void runElements(ExecContext& ctx) {
    int64_t n = out_.numel();
    if (n == 0) return;
    if (kind_ == Kind::Compare && types_[0] == DType::I64 && types_[1] == DType::I64 &&
        !shape_.empty())
      return compareInts(ctx);
    int64_t inner = shape_.empty() ? 1 : shape_.back(), rows = n / inner;
    // Rows are independent: large ops (float64 models' activations) split them over threads.
    parallelRegion(n >= kParallelElements && rows > 1 ? ctx.threads : 1, [&] {
      RowBuffers b(ids_.size(), static_cast<size_t>(inner));
#pragma omp for schedule(static)
      for (int64_t r = 0; r < rows; ++r)
        runRow(ctx, r, inner, b);
    });
  }

  // A thread's row buffers: each operand's row in its domain's type, and the result's row.
  struct RowBuffers {
    RowBuffers(size_t ops, size_t len)
        : fd(ops, std::vector<double>(len)), id(ops, std::vector<int64_t>(len)), fy(len), iy(len) {}
    std::vector<std::vector<double>> fd;
    std::vector<std::vector<int64_t>> id;
    std::vector<double> fy;
    std::vector<int64_t> iy;
  };

  void runRow(ExecContext& ctx, int64_t r, int64_t inner, RowBuffers& b) const {
    size_t rank = shape_.size(), ops = ids_.size();
    auto& fd = b.fd;
    auto& id = b.id;
    auto& fy = b.fy;
    auto& iy = b.iy;
    uint8_t* y = ctx.ptr[static_cast<size_t>(resultId_)];
    const ElementFns& e = op_.def().element;
    bool resultFloat = isFloat(out_.dtype);
    for (size_t k = 0; k < ops; ++k) {
      int64_t off = 0, q = r;
      for (size_t d = rank - 1; d-- > 0 && rank > 1;) {
        off += (q % shape_[d]) * strides_[k][d];
        q /= shape_[d];
      }
      int64_t st = rank ? strides_[k][rank - 1] : 0;
      const uint8_t* p = ctx.ptr[static_cast<size_t>(ids_[k])];
      // Where reads its operands' bytes; everything else its domain's values.
      bool asFloat =
          kind_ == Kind::Where ? isFloat(types_[k]) : floatDomain_ && k < 2 && kind_ != Kind::Where;
      if (kind_ == Kind::Cast) asFloat = isFloat(out_.dtype) || isFloat(types_[k]);
      if (asFloat)
        rowDoubles(p, types_[k], off, st, inner, fd[k].data());
      else
        rowInts(p, types_[k], off, st, inner, id[k].data());
    }
    bool floatOut = resultFloat;
    switch (kind_) {
    case Kind::Unary:
      for (int64_t j = 0; j < inner; ++j)
        floatDomain_ ? void(fy[j] = e.unaryF(fd[0][j])) : void(iy[j] = e.unaryI(id[0][j]));
      break;
    case Kind::Binary:
      for (int64_t j = 0; j < inner; ++j)
        floatDomain_ ? void(fy[j] = e.binaryF(fd[0][j], fd[1][j]))
                     : void(iy[j] = e.binaryI(id[0][j], id[1][j]));
      break;
    case Kind::Compare:
      for (int64_t j = 0; j < inner; ++j)
        iy[j] = floatDomain_ ? compare(fd[0][j], fd[1][j]) : compare(id[0][j], id[1][j]);
      floatOut = false;
      break;
    case Kind::Where:
      for (int64_t j = 0; j < inner; ++j) {
        size_t pick = id[0][j] ? 1 : 2;
        if (resultFloat)
          fy[j] = fd[pick][j];
        else
          iy[j] = id[pick][j];
      }
      break;
    case Kind::Cast: // as the reference cast: floats through double, the rest through int64
      for (int64_t j = 0; j < inner; ++j) {
        if (resultFloat)
          fy[j] = fd[0][j];
        else if (isFloat(types_[0]))
          iy[j] = isBool(out_.dtype) ? fd[0][j] != 0.0 : truncate(fd[0][j]);
        else
          iy[j] = id[0][j];
      }
      break;
    }
    int64_t base = r * inner;
    if (floatOut && resultFloat)
      storeRowDoubles(y, out_.dtype, base, inner, fy.data());
    else
      storeRowInts(y, out_.dtype, base, inner, iy.data());
  }

  void compareInts(ExecContext& ctx) const {
    size_t rank = shape_.size();
    int64_t inner = shape_[rank - 1], rows = out_.numel() / inner;
    auto* y = ctx.ptr[static_cast<size_t>(resultId_)];
    for (int64_t r = 0; r < rows; ++r) {
      int64_t off[2] = {0, 0}, q = r;
      for (size_t d = rank - 1; d-- > 0;) {
        int64_t i = q % shape_[d];
        q /= shape_[d];
        off[0] += i * strides_[0][d];
        off[1] += i * strides_[1][d];
      }
      const auto* a =
          reinterpret_cast<const int64_t*>(ctx.ptr[static_cast<size_t>(ids_[0])]) + off[0];
      const auto* b =
          reinterpret_cast<const int64_t*>(ctx.ptr[static_cast<size_t>(ids_[1])]) + off[1];
      int64_t sa = strides_[0][rank - 1], sb = strides_[1][rank - 1];
      uint8_t* yr = y + r * inner;
      switch (direction_) {
      case 0:
        compareRow<0>(a, sa, b, sb, yr, inner);
        break;
      case 1:
        compareRow<1>(a, sa, b, sb, yr, inner);
        break;
      case 2:
        compareRow<2>(a, sa, b, sb, yr, inner);
        break;
      case 3:
        compareRow<3>(a, sa, b, sb, yr, inner);
        break;
      case 4:
        compareRow<4>(a, sa, b, sb, yr, inner);
        break;
      default:
        compareRow<5>(a, sa, b, sb, yr, inner);
        break;
      }
    }
  }

  // Float to integer as Tensor::getInt: toward zero, saturating, NaN to 0.
  static int64_t truncate(double d) {
    if (std::isnan(d)) return 0;
    if (d >= 9.2233720368547758e18) return INT64_MAX;
    if (d <= -9.2233720368547758e18) return INT64_MIN;
    return static_cast<int64_t>(d);
  }

  template <typename T> int64_t compare(T a, T b) const {
    switch (direction_) {
    case 0:
      return a == b;
    case 1:
      return a != b;
    case 2:
      return a < b;
    case 3:
      return a <= b;
    case 4:
      return a > b;
    default:
      return a >= b;
    }
  }

  const Op& op_;
  Kind kind_;
  TensorType out_;
  Shape shape_; // out_'s shape with mergeable dims merged (collapseDims)
  std::vector<int64_t> ids_;
  std::vector<DType> types_;
  std::vector<std::vector<int64_t>> strides_;
  int64_t resultId_ = -1;
  bool floatDomain_ = true;
  int direction_ = 0; // eq, ne, lt, le, gt, ge
};

} // namespace

bool hasWideKernel(const Op& op) {
  static const std::set<std::string_view> kSpecial = {"compare", "where", "cast"};
  if (op.numResults() != 1 || op.numOperands() == 0) return false; // constants are folded
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
