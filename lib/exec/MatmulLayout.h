// How a matmul step's operands lie in memory, as oneDNN's memory descriptors read them: shared
// by the f32 and bf16 matmul kernels. Only the kernels that call oneDNN include this header.
#pragma once

#include "DnnlGlue.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/support/Error.h"

#include <map>

namespace shardc::matmul_layout {

// Dims and strides of `shape` right-aligned to `rank` (leading dims of size 1).
inline void aligned(const Shape& shape, size_t rank, dnnl::memory::dims& dims,
                    dnnl::memory::dims& strides) {
  dims.assign(rank - shape.size(), 1);
  dims.insert(dims.end(), shape.begin(), shape.end());
  strides = dnnl_glue::rowMajor(dims);
}

// transpose(x) seen in x's bytes, right-aligned to `rank`: dim i of the result is dim
// perm[i] of x, with its stride.
inline void permuted(const Op& t, size_t rank, dnnl::memory::dims& dims,
                     dnnl::memory::dims& strides) {
  const Shape& xs = t.operand(0)->type().shape;
  dnnl::memory::dims xd(xs.begin(), xs.end()), xst = dnnl_glue::rowMajor(xd);
  const auto& perm = t.attrs().getInts("perm");
  size_t pad = rank - perm.size();
  dims.assign(pad, 1);
  strides.assign(pad, numel(xs));
  for (int64_t p : perm) {
    dims.push_back(xd[static_cast<size_t>(p)]);
    strides.push_back(xst[static_cast<size_t>(p)]);
  }
}

// transpose(X) x G summed over the batch dims (a weight gradient, Fusion.cpp): X^T G with X as
// [rows, k] and G as [rows, n]. G may come through a transpose of the step (`gTranspose`): it
// is then read in another row order than X's. `inStep`: the step's ops by their results.
struct BatchSum {
  const Value *x = nullptr, *g = nullptr;
  const Op* gTranspose = nullptr;
  int64_t k = 0, n = 0, rows = 0;
  double flops() const {
    return 2.0 * static_cast<double>(k) * static_cast<double>(n) * static_cast<double>(rows);
  }
};
inline BatchSum batchSumOf(const Op& mm, const std::map<const Value*, const Op*>& inStep) {
  auto t = inStep.find(mm.operand(0));
  if (t == inStep.end() || t->second->name() != opname::kTranspose)
    throw Error("step 'matmul': a batch sum needs the transposed operand in the step");
  BatchSum b;
  b.x = t->second->operand(0);
  b.g = mm.operand(1);
  if (auto tg = inStep.find(b.g); tg != inStep.end()) {
    if (tg->second->name() != opname::kTranspose)
      throw Error("step 'matmul': a batch sum's second operand is made by '" + tg->second->name() +
                  "' in the step");
    b.gTranspose = tg->second;
  }
  b.k = b.x->type().shape.back();
  b.n = b.g->type().shape.back();
  b.rows = b.x->type().numel() / b.k;
  return b;
}

} // namespace shardc::matmul_layout
