// Elementwise kernels: one loop for a whole group of f32/i1 lane ops (Fusion.cpp). The
// group's inputs are read block by block (in place when they have the group's shape, else
// gathered with broadcast strides), every op runs as a vector loop over the block, and the
// values other steps read are stored at the end of the block, so an output may overwrite
// an input it was computed from.
#include "Fusion.h"
#include "Kernel.h"
#include "LaneProgram.h"
#include "VecMath.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/support/Error.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <omp.h>

namespace shardc {
namespace {

constexpr int64_t kBlock = 256;           // a block of every slot stays in L1
constexpr int64_t kParallelMin = 1 << 15; // elements below which one thread does it all

enum class Opc : uint8_t {
  Copy,
  Neg,
  Abs,
  Relu,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Recip,
  Tanh,
  Erf,
  Sigmoid,
  Floor,
  Ceil,
  Not,
  GeluErf,
  GeluTanh,
  GeluErfGrad, // a: x, b: dy
  GeluTanhGrad,
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Square,
  Cube,
  Max,
  Min,
  And,
  Or,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  Where,
  MulAdd,    // a * b + c: a mul read only by an add or sub, one pass instead of two
  MulSub,    // a * b - c
  NegMulAdd, // c - a * b
  ToBool,
  RoundBf16, // to the nearest bf16 (a cast to bf16: its lanes stay f32)
  Iota       // the element's index along one dim (Ins::stride, Ins::dim)
};

Opc pickGelu(const Op& op) {
  return op.attrs().getString("approximate") == "tanh" ? Opc::GeluTanh : Opc::GeluErf;
}
Opc pickGeluGrad(const Op& op) {
  return op.attrs().getString("approximate") == "tanh" ? Opc::GeluTanhGrad : Opc::GeluErfGrad;
}
Opc pickCast(const Op& op) {
  DType to = op.result(0)->type().dtype, from = op.operand(0)->type().dtype;
  if (to == DType::BF16) return Opc::RoundBf16;
  return to == DType::I1 && from != DType::I1 ? Opc::ToBool : Opc::Copy;
}
Opc pickCompare(const Op& op) {
  static const std::map<std::string, Opc, std::less<>> kDirections = {
      {"eq", Opc::Eq}, {"ne", Opc::Ne}, {"lt", Opc::Lt},
      {"le", Opc::Le}, {"gt", Opc::Gt}, {"ge", Opc::Ge}};
  return kDirections.at(op.attrs().getString("direction"));
}

// The elementwise ops the lane kernels run, with the opcode of each (or how its attributes
// pick one): the one table that fusion (isLaneOp), binding (LaneProgram::instruction) and
// planning (hasNativeKernel) read. A native elementwise op is an entry here and its loop in
// runInsLoop. (iota is an index, not a table op: isLaneIota.)
struct LaneOp {
  Opc opc;
  Opc (*pick)(const Op&) = nullptr;
};
const std::map<std::string_view, LaneOp, std::less<>> kLaneOps = {
    {opname::kNeg, {Opc::Neg}},
    {opname::kAbs, {Opc::Abs}},
    {opname::kRelu, {Opc::Relu}},
    {opname::kExp, {Opc::Exp}},
    {opname::kLog, {Opc::Log}},
    {opname::kSqrt, {Opc::Sqrt}},
    {opname::kRsqrt, {Opc::Rsqrt}},
    {opname::kReciprocal, {Opc::Recip}},
    {opname::kTanh, {Opc::Tanh}},
    {opname::kErf, {Opc::Erf}},
    {opname::kSigmoid, {Opc::Sigmoid}},
    {opname::kFloor, {Opc::Floor}},
    {opname::kCeil, {Opc::Ceil}},
    {opname::kNot, {Opc::Not}},
    {opname::kBroadcast, {Opc::Copy}}, // an index map: the lanes read with broadcast strides
    {opname::kGelu, {Opc::GeluErf, pickGelu}},
    {opname::kGeluGrad, {Opc::GeluErfGrad, pickGeluGrad}},
    {opname::kCast, {Opc::Copy, pickCast}},
    {opname::kAdd, {Opc::Add}},
    {opname::kSub, {Opc::Sub}},
    {opname::kMul, {Opc::Mul}},
    {opname::kDiv, {Opc::Div}},
    {opname::kPow, {Opc::Pow}},
    {opname::kMax, {Opc::Max}},
    {opname::kMin, {Opc::Min}},
    {opname::kAnd, {Opc::And}},
    {opname::kOr, {Opc::Or}},
    {opname::kCompare, {Opc::Eq, pickCompare}},
    {opname::kWhere, {Opc::Where}},
};

SHARDC_INLINE void runInsLoop(Opc opc, float* __restrict d, const float* a, const float* b,
                              const float* c, int64_t n) {
  switch (opc) {
  case Opc::Copy:
    for (int64_t i = 0; i < n; ++i)
      d[i] = a[i];
    break;
  case Opc::RoundBf16:
    for (int64_t i = 0; i < n; ++i)
      d[i] = bf16ToFloat(floatToBF16(a[i]));
    break;
  case Opc::Neg:
    for (int64_t i = 0; i < n; ++i)
      d[i] = -a[i];
    break;
  case Opc::Abs:
    for (int64_t i = 0; i < n; ++i)
      d[i] = std::fabs(a[i]);
    break;
  case Opc::Relu: // NaN stays NaN
    for (int64_t i = 0; i < n; ++i)
      d[i] = a[i] > 0 || a[i] != a[i] ? a[i] : 0.0f;
    break;
  case Opc::Exp:
    for (int64_t i = 0; i < n; ++i)
      d[i] = vm::exp(a[i]);
    break;
  case Opc::Log:
    for (int64_t i = 0; i < n; ++i)
      d[i] = vm::log(a[i]);
    break;
  case Opc::Sqrt:
    for (int64_t i = 0; i < n; ++i)
      d[i] = std::sqrt(a[i]);
    break;
  case Opc::Rsqrt:
    for (int64_t i = 0; i < n; ++i)
      d[i] = 1.0f / std::sqrt(a[i]);
    break;
  case Opc::Recip:
    for (int64_t i = 0; i < n; ++i)
      d[i] = 1.0f / a[i];
    break;
  case Opc::Tanh:
    for (int64_t i = 0; i < n; ++i)
      d[i] = vm::tanh(a[i]);
    break;
  case Opc::Erf:
    for (int64_t i = 0; i < n; ++i)
      d[i] = vm::erf(a[i]);
    break;
  case Opc::Sigmoid:
    for (int64_t i = 0; i < n; ++i)
      d[i] = vm::sigmoid(a[i]);
    break;
  case Opc::Floor:
    for (int64_t i = 0; i < n; ++i)
      d[i] = std::floor(a[i]);
    break;
  case Opc::Ceil:
    for (int64_t i = 0; i < n; ++i)
      d[i] = std::ceil(a[i]);
    break;
  case Opc::Not:
    for (int64_t i = 0; i < n; ++i)
      d[i] = a[i] != 0 ? 0.0f : 1.0f;
    break;
  case Opc::GeluErf:
    for (int64_t i = 0; i < n; ++i)
      d[i] = vm::geluErf(a[i]);
    break;
  case Opc::GeluTanh:
    for (int64_t i = 0; i < n; ++i)
      d[i] = vm::geluTanh(a[i]);
    break;
  case Opc::GeluErfGrad:
    for (int64_t i = 0; i < n; ++i)
      d[i] = vm::geluErfGrad(a[i], b[i]);
    break;
  case Opc::GeluTanhGrad:
    for (int64_t i = 0; i < n; ++i)
      d[i] = vm::geluTanhGrad(a[i], b[i]);
    break;
  case Opc::Add:
    for (int64_t i = 0; i < n; ++i)
      d[i] = a[i] + b[i];
    break;
  case Opc::Sub:
    for (int64_t i = 0; i < n; ++i)
      d[i] = a[i] - b[i];
    break;
  case Opc::Mul:
    for (int64_t i = 0; i < n; ++i)
      d[i] = a[i] * b[i];
    break;
  case Opc::Div:
    for (int64_t i = 0; i < n; ++i)
      d[i] = a[i] / b[i];
    break;
  case Opc::Pow:
    for (int64_t i = 0; i < n; ++i)
      d[i] = std::pow(a[i], b[i]);
    break;
  case Opc::Square:
    for (int64_t i = 0; i < n; ++i)
      d[i] = a[i] * a[i];
    break;
  case Opc::Cube:
    for (int64_t i = 0; i < n; ++i)
      d[i] = a[i] * a[i] * a[i];
    break;
  // Operands read into locals first: the vectorizer then blends instead of masking loads.
  case Opc::Max: // NaN propagates
    for (int64_t i = 0; i < n; ++i) {
      float x = a[i], y = b[i];
      d[i] = x != x ? x : (y != y ? y : (x > y ? x : y));
    }
    break;
  case Opc::Min:
    for (int64_t i = 0; i < n; ++i) {
      float x = a[i], y = b[i];
      d[i] = x != x ? x : (y != y ? y : (x < y ? x : y));
    }
    break;
  case Opc::And:
    for (int64_t i = 0; i < n; ++i) {
      float x = a[i], y = b[i];
      d[i] = ((x != 0) & (y != 0)) ? 1.0f : 0.0f;
    }
    break;
  case Opc::Or:
    for (int64_t i = 0; i < n; ++i) {
      float x = a[i], y = b[i];
      d[i] = ((x != 0) | (y != 0)) ? 1.0f : 0.0f;
    }
    break;
  case Opc::Eq:
    for (int64_t i = 0; i < n; ++i)
      d[i] = a[i] == b[i] ? 1.0f : 0.0f;
    break;
  case Opc::Ne:
    for (int64_t i = 0; i < n; ++i)
      d[i] = a[i] != b[i] ? 1.0f : 0.0f;
    break;
  case Opc::Lt:
    for (int64_t i = 0; i < n; ++i)
      d[i] = a[i] < b[i] ? 1.0f : 0.0f;
    break;
  case Opc::Le:
    for (int64_t i = 0; i < n; ++i)
      d[i] = a[i] <= b[i] ? 1.0f : 0.0f;
    break;
  case Opc::Gt:
    for (int64_t i = 0; i < n; ++i)
      d[i] = a[i] > b[i] ? 1.0f : 0.0f;
    break;
  case Opc::Ge:
    for (int64_t i = 0; i < n; ++i)
      d[i] = a[i] >= b[i] ? 1.0f : 0.0f;
    break;
  case Opc::Where: // locals, as for Max
    for (int64_t i = 0; i < n; ++i) {
      float t = b[i], f = c[i];
      d[i] = a[i] != 0 ? t : f;
    }
    break;
  case Opc::MulAdd:
    for (int64_t i = 0; i < n; ++i)
      d[i] = a[i] * b[i] + c[i];
    break;
  case Opc::MulSub:
    for (int64_t i = 0; i < n; ++i)
      d[i] = a[i] * b[i] - c[i];
    break;
  case Opc::NegMulAdd:
    for (int64_t i = 0; i < n; ++i)
      d[i] = c[i] - a[i] * b[i];
    break;
  case Opc::ToBool:
    for (int64_t i = 0; i < n; ++i)
      d[i] = a[i] != 0 ? 1.0f : 0.0f;
    break;
  case Opc::Iota: // evalBlock counts it
    break;
  }
}
SHARDC_VECTOR_VERSIONS(void, runIns,
                       (Opc opc, float* __restrict d, const float* a, const float* b,
                        const float* c, int64_t n),
                       (opc, d, a, b, c, n))

// Elements [p0, p0 + n) of an iota whose dim has `dim` entries `stride` elements apart, in
// runs: counting ones along the last dim, constant ones along an outer dim.
SHARDC_INLINE void countIndexLoop(float* d, int64_t p0, int64_t n, int64_t stride, int64_t dim) {
  int64_t q = (p0 / stride) % dim, r = p0 % stride;
  for (int64_t i = 0; i < n;) {
    if (stride == 1) {
      // A block is far shorter than 2^31: 32-bit counts convert in vector registers.
      auto cnt = static_cast<int32_t>(std::min(dim - q, n - i));
      float from = static_cast<float>(q);
      float* run = d + i;
#pragma omp simd
      for (int32_t j = 0; j < cnt; ++j)
        run[j] = from + static_cast<float>(j);
      i += cnt;
      q = (q + cnt) % dim;
    } else {
      int64_t cnt = std::min(stride - r, n - i);
      std::fill_n(d + i, cnt, static_cast<float>(q));
      i += cnt;
      r += cnt;
      if (r == stride) {
        r = 0;
        q = (q + 1) % dim;
      }
    }
  }
}
SHARDC_VECTOR_VERSIONS(void, countIndex,
                       (float* d, int64_t p0, int64_t n, int64_t stride, int64_t dim),
                       (d, p0, n, stride, dim))

// An integer value as f32 (rounded to nearest; exact below 2^24).
float intAt(const uint8_t* base, DType t, int64_t i) {
  return t == DType::I64 ? static_cast<float>(reinterpret_cast<const int64_t*>(base)[i])
                         : static_cast<float>(reinterpret_cast<const int32_t*>(base)[i]);
}

SHARDC_INLINE void boolsToFloatsLoop(float* __restrict d, const uint8_t* __restrict b, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    d[i] = b[i] ? 1.0f : 0.0f;
}
SHARDC_VECTOR_VERSIONS(void, boolsToFloats,
                       (float* __restrict d, const uint8_t* __restrict b, int64_t n), (d, b, n))

// Element i of a lane input of type `t` as f32.
float laneValue(const uint8_t* base, DType t, int64_t i) {
  switch (t) {
  case DType::I1:
    return base[i] ? 1.0f : 0.0f;
  case DType::F32:
    return reinterpret_cast<const float*>(base)[i];
  case DType::BF16:
    return bf16ToFloat(reinterpret_cast<const uint16_t*>(base)[i]);
  default:
    return intAt(base, t, i);
  }
}

SHARDC_INLINE void bf16sToFloatsLoop(float* __restrict d, const uint16_t* __restrict b,
                                     int64_t stride, int64_t n) {
  if (stride == 1)
    for (int64_t i = 0; i < n; ++i)
      d[i] = bf16ToFloat(b[i]);
  else
    for (int64_t i = 0; i < n; ++i)
      d[i] = bf16ToFloat(b[i * stride]);
}
SHARDC_VECTOR_VERSIONS(void, bf16sToFloats,
                       (float* __restrict d, const uint16_t* __restrict b, int64_t stride,
                        int64_t n),
                       (d, b, stride, n))

SHARDC_INLINE void floatsToBf16sLoop(uint16_t* __restrict d, const float* __restrict a, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    d[i] = floatToBF16(a[i]);
}
SHARDC_VECTOR_VERSIONS(void, floatsToBf16s,
                       (uint16_t* __restrict d, const float* __restrict a, int64_t n), (d, a, n))

// A constant whose every element is the first (a full-size literal from canonicalization).
bool isSplat(const Tensor& t) {
  size_t es = dtypeSize(t.dtype());
  for (int64_t i = 1; i < t.numel(); ++i)
    if (std::memcmp(t.data(), t.data() + static_cast<size_t>(i) * es, es) != 0) return false;
  return t.numel() > 0;
}

} // namespace

// A group input: read in place (its shape is the group's, f32) or gathered per block
// (converted to f32 when bf16, i1 or an integer compared with an index).
struct LaneProgram::Input {
  int slot;
  int64_t id;
  DType dtype;
  bool direct;
  std::vector<int64_t> strides; // per dim of the group shape, in elements (0: broadcast)
  int uniform = -1; // one value for every element: its block in uniform_, filled per run
  int64_t bytes = 0;
  bool whole = false; // of the group's shape (bf16: converted block by block)
};

struct LaneProgram::Output {
  int slot;
  int64_t id;
  DType dtype; // f32, bf16 (a cast's), i1, or an integer iota's
  int64_t bytes;
  // Computed straight into the output buffer: f32, and (this run) overlapping no input, so
  // no later block reads what it overwrites. Else stored from its slot at the block's end.
  bool inPlace = false;
};

struct LaneProgram::Ins {
  Opc opc;
  int dst, a = -1, b = -1, c = -1;
  int64_t stride = 1, dim = 1; // Iota
};

LaneProgram::LaneProgram(const BindArgs& a, const std::vector<const Op*>& ops, int64_t block)
    : block_(std::max<int64_t>(block, 1)) {
  shape_ = ops.back()->result(0)->type().shape;
  auto inputSlot = [&](const Value* v) {
    auto it = slotOf_.find(v);
    if (it != slotOf_.end()) return it->second;
    int s = slots_++;
    slotOf_[v] = s;
    Input in{s, a.num.id(v), v->type().dtype, false, {}};
    in.bytes = v->type().bytes();
    in.whole = v->type().shape == shape_;
    in.direct = in.dtype == DType::F32 && in.whole;
    const Shape& vs = v->type().shape;
    if (vs.size() > shape_.size())
      throw Error("elementwise step: operand " + v->type().str() + " is larger than the group");
    in.strides = broadcastStrides(shape_, vs);
    auto c = a.constants.find(in.id);
    if (numel(vs) == 1 || (c != a.constants.end() && isSplat(c->second))) {
      in.direct = false;
      in.uniform = uniforms_++;
    }
    inputs_.push_back(std::move(in));
    return s;
  };
  for (const Op* op : ops) {
    if (!isLaneOp(*op) || op->result(0)->type().shape != shape_)
      throw Error("step '" + a.step.kernel + "': op '" + op->name() +
                  "' does not fit an elementwise kernel over " + shapeStr(shape_));
    std::vector<int> src;
    for (const Value* v : op->operands())
      src.push_back(inputSlot(v));
    int dst = slots_;
    Ins ins = instruction(*op, dst, src, a);
    if (ins.opc == Opc::Copy && !a.stored(op->result(0))) {
      slotOf_[op->result(0)] = ins.a; // a broadcast or a cast that changes no lane: no copy
      continue;
    }
    ++slots_;
    slotOf_[op->result(0)] = dst;
    code_.push_back(ins);
    if (a.stored(op->result(0)))
      outputs_.push_back({dst, a.num.id(op->result(0)), op->result(0)->type().dtype,
                          op->result(0)->type().bytes()});
  }
  fuseMultiplyAdds();
}

// Each pass over the block costs about as much as its arithmetic: a mul whose only reader
// is an add or a sub joins it. Every slot is written once, so the mul's operands still hold
// their values where the add runs.
void LaneProgram::fuseMultiplyAdds() {
  std::vector<int> reads(static_cast<size_t>(slots_), 0), maker(static_cast<size_t>(slots_), -1);
  for (size_t i = 0; i < code_.size(); ++i) {
    for (int src : {code_[i].a, code_[i].b, code_[i].c})
      if (src >= 0) ++reads[static_cast<size_t>(src)];
    maker[static_cast<size_t>(code_[i].dst)] = static_cast<int>(i);
  }
  for (const Output& o : outputs_)
    ++reads[static_cast<size_t>(o.slot)];
  std::vector<bool> gone(code_.size(), false);
  for (Ins& ins : code_) {
    if (ins.opc != Opc::Add && ins.opc != Opc::Sub) continue;
    for (int side : {0, 1}) {
      int s = side == 0 ? ins.a : ins.b;
      int m = maker[static_cast<size_t>(s)];
      if (m < 0 || gone[static_cast<size_t>(m)] || code_[static_cast<size_t>(m)].opc != Opc::Mul ||
          reads[static_cast<size_t>(s)] != 1)
        continue;
      const Ins& mul = code_[static_cast<size_t>(m)];
      int other = side == 0 ? ins.b : ins.a;
      ins.opc = ins.opc == Opc::Add ? Opc::MulAdd : side == 0 ? Opc::MulSub : Opc::NegMulAdd;
      ins.a = mul.a;
      ins.b = mul.b;
      ins.c = other;
      gone[static_cast<size_t>(m)] = true;
      break;
    }
  }
  size_t k = 0;
  for (size_t i = 0; i < code_.size(); ++i)
    if (!gone[i]) code_[k++] = code_[i];
  code_.resize(k);
}

LaneProgram::~LaneProgram() = default;

int LaneProgram::slot(const Value* v) const {
  return slotOf_.at(v);
}

void LaneProgram::prepare(const ExecContext& ctx) {
  for (Output& o : outputs_) {
    auto out = reinterpret_cast<uintptr_t>(ctx.ptr[static_cast<size_t>(o.id)]);
    o.inPlace = o.dtype == DType::F32;
    for (const Input& in : inputs_) {
      auto p = reinterpret_cast<uintptr_t>(ctx.ptr[static_cast<size_t>(in.id)]);
      if (p < out + static_cast<uintptr_t>(o.bytes) && out < p + static_cast<uintptr_t>(in.bytes))
        o.inPlace = false;
    }
  }
  size_t threads = static_cast<size_t>(std::max(ctx.threads, 1)),
         slots = static_cast<size_t>(slots_);
  if (scratch_.size() < threads * slots * static_cast<size_t>(block_))
    scratch_.assign(threads * slots * static_cast<size_t>(block_), 0.0f);
  if (slotPtrs_.size() < threads * slots) slotPtrs_.assign(threads * slots, nullptr);
  uniform_.resize(static_cast<size_t>(uniforms_ * block_));
  for (const Input& in : inputs_)
    if (in.uniform >= 0) {
      const uint8_t* p = ctx.ptr[static_cast<size_t>(in.id)];
      std::fill_n(uniform_.begin() + in.uniform * block_, block_, laneValue(p, in.dtype, 0));
    }
}

LaneProgram::Ins LaneProgram::instruction(const Op& op, int dst, const std::vector<int>& src,
                                          const BindArgs& a) {
  const std::string& name = op.name();
  if (name == opname::kIota) {
    size_t axis = static_cast<size_t>(*normalizeAxis(op.attrs().getInt("axis"), shape_.size()));
    Ins ins{Opc::Iota, dst};
    ins.dim = shape_[axis];
    for (size_t d = axis + 1; d < shape_.size(); ++d)
      ins.stride *= shape_[d];
    return ins;
  }
  const LaneOp& lane = kLaneOps.at(name);
  Opc opc = lane.pick ? lane.pick(op) : lane.opc;
  if (opc == Opc::Pow) {
    // A constant exponent (x^2 and x^3 of a decomposed GELU, x^1 of pow's own gradient)
    // needs no pow().
    auto c = a.constants.find(a.num.id(op.operand(1)));
    if (c != a.constants.end() && isSplat(c->second)) {
      double v = c->second.getDouble(0);
      if (v == 1) return {Opc::Copy, dst, src[0]};
      if (v == 2) return {Opc::Square, dst, src[0]};
      if (v == 3) return {Opc::Cube, dst, src[0]};
      if (v == 0.5) return {Opc::Sqrt, dst, src[0]};
      if (v == -0.5) return {Opc::Rsqrt, dst, src[0]};
      if (v == -1) return {Opc::Recip, dst, src[0]};
    }
  }
  Ins ins{opc, dst, src[0]};
  if (src.size() > 1) ins.b = src[1];
  if (src.size() > 2) ins.c = src[2];
  return ins;
}

void LaneProgram::load(const ExecContext& ctx, const Input& in, int64_t p0, int64_t len,
                       float* slotBuf, float** slot) const {
  const uint8_t* base = ctx.ptr[static_cast<size_t>(in.id)];
  if (in.direct) {
    slot[in.slot] = reinterpret_cast<float*>(const_cast<uint8_t*>(base)) + p0;
    return;
  }
  if (in.uniform >= 0) {
    slot[in.slot] = const_cast<float*>(uniform_.data()) + in.uniform * block_;
    return;
  }
  float* dst = slotBuf;
  slot[in.slot] = dst;
  if (in.whole && in.dtype == DType::BF16) {
    bf16sToFloats(dst, reinterpret_cast<const uint16_t*>(base) + p0, 1, len);
    return;
  }
  size_t rank = shape_.size();
  int64_t inner = rank ? shape_[rank - 1] : 1, innerStride = rank ? in.strides[rank - 1] : 0;
  for (int64_t p = p0; p < p0 + len;) {
    int64_t row = p / inner, j = p % inner, cnt = std::min(inner - j, p0 + len - p);
    int64_t off = 0, r = row;
    for (size_t d = rank - 1; d-- > 0 && rank > 1;) {
      off += (r % shape_[d]) * in.strides[d];
      r /= shape_[d];
    }
    off += j * innerStride;
    if (innerStride == 0) {
      std::fill_n(dst, cnt, laneValue(base, in.dtype, off));
    } else if (in.dtype == DType::BF16) {
      bf16sToFloats(dst, reinterpret_cast<const uint16_t*>(base) + off, innerStride, cnt);
    } else if (in.dtype == DType::I1) {
      if (innerStride == 1)
        boolsToFloats(dst, base + off, cnt);
      else
        for (int64_t i = 0; i < cnt; ++i)
          dst[i] = base[off + i * innerStride] ? 1.0f : 0.0f;
    } else if (in.dtype != DType::F32) {
      for (int64_t i = 0; i < cnt; ++i)
        dst[i] = intAt(base, in.dtype, off + i * innerStride);
    } else {
      const float* src = reinterpret_cast<const float*>(base) + off;
      if (innerStride == 1)
        std::memcpy(dst, src, static_cast<size_t>(cnt) * sizeof(float));
      else
        for (int64_t i = 0; i < cnt; ++i)
          dst[i] = src[i * innerStride];
    }
    dst += cnt;
    p += cnt;
  }
}

float* const* LaneProgram::evalBlock(const ExecContext& ctx, int64_t p0, int64_t len, int thread) {
  float* scratch = scratch_.data() + static_cast<size_t>(thread) * static_cast<size_t>(slots_) *
                                         static_cast<size_t>(block_);
  float** slots = slotPtrs_.data() + static_cast<size_t>(thread) * static_cast<size_t>(slots_);
  for (int s = 0; s < slots_; ++s)
    slots[s] = scratch + static_cast<size_t>(s) * block_;
  for (const Input& in : inputs_)
    load(ctx, in, p0, len, scratch + static_cast<size_t>(in.slot) * block_, slots);
  for (const Output& o : outputs_)
    if (o.inPlace)
      slots[o.slot] = reinterpret_cast<float*>(ctx.ptr[static_cast<size_t>(o.id)]) + p0;
  for (const Ins& i : code_)
    if (i.opc == Opc::Iota)
      countIndex(slots[i.dst], p0, len, i.stride, i.dim);
    else
      runIns(i.opc, slots[i.dst], slots[i.a], i.b >= 0 ? slots[i.b] : nullptr,
             i.c >= 0 ? slots[i.c] : nullptr, len);
  for (const Output& o : outputs_) {
    if (o.inPlace) continue;
    uint8_t* out = ctx.ptr[static_cast<size_t>(o.id)];
    const float* s = slots[o.slot];
    if (o.dtype == DType::I1)
      for (int64_t i = 0; i < len; ++i)
        out[p0 + i] = s[i] != 0;
    else if (o.dtype == DType::I64)
      for (int64_t i = 0; i < len; ++i)
        reinterpret_cast<int64_t*>(out)[p0 + i] = static_cast<int64_t>(s[i]);
    else if (o.dtype == DType::I32)
      for (int64_t i = 0; i < len; ++i)
        reinterpret_cast<int32_t*>(out)[p0 + i] = static_cast<int32_t>(s[i]);
    else if (o.dtype == DType::BF16)
      floatsToBf16s(reinterpret_cast<uint16_t*>(out) + p0, s, len);
    else
      std::memcpy(reinterpret_cast<float*>(out) + p0, s, static_cast<size_t>(len) * 4);
  }
  return slots;
}

namespace {

class LaneKernel : public Kernel {
public:
  explicit LaneKernel(const BindArgs& a)
      : prog_(a, a.ops, kBlock), n_(numel(a.anchor().result(0)->type().shape)) {}

  void run(ExecContext& ctx) override {
    if (n_ == 0) return;
    int64_t blocks = (n_ + kBlock - 1) / kBlock;
    int threads = n_ >= kParallelMin ? static_cast<int>(std::min<int64_t>(ctx.threads, blocks)) : 1;
    prog_.prepare(ctx);
    parallelRegion(threads, [&] {
#pragma omp for schedule(static)
      for (int64_t blk = 0; blk < blocks; ++blk) {
        int t = omp_get_thread_num();
        prog_.evalBlock(ctx, blk * kBlock, std::min(kBlock, n_ - blk * kBlock), t);
      }
    });
  }

private:
  LaneProgram prog_;
  int64_t n_;
};

} // namespace

bool isLaneOpName(std::string_view name) {
  return kLaneOps.count(name) > 0;
}

std::unique_ptr<Kernel> bindElementwise(const BindArgs& a) {
  if (a.step.kernel == "fused_elementwise" || (a.ops.size() == 1 && isLaneOp(a.anchor())))
    return std::make_unique<LaneKernel>(a);
  return nullptr;
}

} // namespace shardc
