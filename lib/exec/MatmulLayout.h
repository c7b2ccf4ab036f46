// How a matmul step's operands lie in memory, as oneDNN's memory descriptors read them: shared
// by the f32 and bf16 matmul kernels. Only the kernels that call oneDNN include this header.
#pragma once

#include "DnnlGlue.h"

#include "shardc/ir/IR.h"

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

} // namespace shardc::matmul_layout
