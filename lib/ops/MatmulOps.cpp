// matmul: [..., m, k] x [..., k, n] -> [..., m, n] with numpy broadcasting of batch dims.
#include "GradUtil.h"
#include "OpFamilies.h"
#include "OpUtil.h"

#include "shardc/ir/IR.h"

namespace shardc {
namespace {
using namespace ops;

std::string matmulRule(const OpSig& sig, std::vector<TensorType>& res) {
  const TensorType &a = sig.operands[0], &b = sig.operands[1];
  if (a.dtype != b.dtype)
    return "matmul operands must have the same element type, got " + a.str() + " and " + b.str();
  if (!isFloat(a.dtype) && !isInteger(a.dtype))
    return "matmul needs numeric operands, got " + a.str();
  if (a.rank() < 2 || b.rank() < 2)
    return "matmul operands must have rank >= 2, got " + a.str() + " and " + b.str();
  int64_t k = a.shape.back(), k2 = b.shape[b.shape.size() - 2];
  if (k != k2)
    return "matmul contracting dimensions differ: " + a.str() + " has " + std::to_string(k) + ", " +
           b.str() + " has " + std::to_string(k2);
  Shape ab(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2), out;
  std::string err = broadcastShapes(ab, bb, out);
  if (!err.empty()) return "matmul batch dimensions: " + err;
  out.push_back(a.shape[a.shape.size() - 2]);
  out.push_back(b.shape.back());
  res = {TensorType{a.dtype, out}};
  return "";
}

double matmulFlops(const OpSig& sig, const std::vector<TensorType>& res) {
  int64_t k = sig.operands[0].shape.back();
  return 2.0 * numelD(res[0]) * static_cast<double>(k);
}

template <typename T>
std::vector<T> matmulKernel(const Shape& as, const std::vector<T>& a, const Shape& bs,
                            const std::vector<T>& b, const Shape& out) {
  size_t r = out.size();
  int64_t m = out[r - 2], n = out[r - 1], k = as.back();
  Shape batch(out.begin(), out.end() - 2);
  Shape abatch(as.begin(), as.end() - 2), bbatch(bs.begin(), bs.end() - 2);
  auto ia = broadcastIndexMap(batch, abatch), ib = broadcastIndexMap(batch, bbatch);
  std::vector<T> c(static_cast<size_t>(numel(out)), T(0));
  for (size_t bi = 0; bi < ia.size(); ++bi) {
    const T* pa = a.data() + ia[bi] * m * k;
    const T* pb = b.data() + ib[bi] * k * n;
    T* pc = c.data() + static_cast<int64_t>(bi) * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) {
        T av = pa[i * k + p];
        const T* rowb = pb + p * n;
        T* rowc = pc + i * n;
        for (int64_t j = 0; j < n; ++j)
          rowc[j] += av * rowb[j];
      }
  }
  return c;
}

// Swaps the last two dims.
Value* transposeLast2(Builder& b, Value* v) {
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < v->type().rank(); ++i)
    perm.push_back(i);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return b.value("transpose", {v}, {{"perm", perm}});
}

// dA = G B^T, dB = A^T G, summed over batch dims that were broadcast.
std::vector<Value*> matmulGrad(const GradArgs& a) {
  Value *x = a.op.operand(0), *y = a.op.operand(1), *g = gradOrZero(a, 0);
  if (!isFloat(x->type().dtype)) return {nullptr, nullptr};
  Value* dx = a.b.value("matmul", {g, transposeLast2(a.b, y)});
  Value* dy = a.b.value("matmul", {transposeLast2(a.b, x), g});
  return {sumToShape(a.b, dx, x->type().shape), sumToShape(a.b, dy, y->type().shape)};
}

} // namespace

void registerMatmulOps(OpRegistry& r) {
  OpDef d;
  d.name = "matmul";
  d.summary = "matrix product over the last two dims, batch dims broadcast";
  d.minOperands = d.maxOperands = 2;
  d.inferTypes = matmulRule;
  d.flops = matmulFlops;
  d.kernel = [](const KernelArgs& args) {
    const Tensor &a = *args.inputs[0], &b = *args.inputs[1];
    const TensorType& rt = args.resultTypes[0];
    if (isFloat(a.dtype()))
      return std::vector<Tensor>{Tensor::fromDoubles(
          rt, matmulKernel(a.shape(), a.toDoubles(), b.shape(), b.toDoubles(), rt.shape))};
    return std::vector<Tensor>{
        Tensor::fromInts(rt, matmulKernel(a.shape(), a.toInts(), b.shape(), b.toInts(), rt.shape))};
  };
  d.gradient = matmulGrad;
  // ([..b, i, k], [..b, k, j]) -> ([..b, i, j]) reduction={k}; broadcast batch dims get no factor.
  d.shardingRule = [](const OpSig& sig, const std::vector<TensorType>& res) {
    ShardingRule rule;
    const Shape& out = res[0].shape;
    size_t batch = out.size() - 2;
    ShardingRule::Dims outDims = newDims(rule, Shape(out.begin(), out.end() - 2));
    int i = rule.addFactor(out[batch]), j = rule.addFactor(out[batch + 1]);
    int k = rule.addFactor(sig.operands[0].shape.back(), FactorKind::Reduction);
    auto operand = [&](const Shape& s, int a, int b) {
      ShardingRule::Dims dims;
      size_t off = batch - (s.size() - 2);
      for (size_t d = 0; d + 2 < s.size(); ++d)
        dims.push_back(s[d] == out[off + d] ? outDims[off + d] : std::vector<int>{});
      dims.push_back({a});
      dims.push_back({b});
      return dims;
    };
    rule.operands = {operand(sig.operands[0].shape, i, k), operand(sig.operands[1].shape, k, j)};
    outDims.push_back({i});
    outDims.push_back({j});
    rule.results = {outDims};
    return rule;
  };
  r.add(std::move(d));
}

} // namespace shardc
