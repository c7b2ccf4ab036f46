// oneDNN's engine and stream for one CompiledFunction, and memory descriptors from shardc
// shapes. Only the kernels that call oneDNN include this header.
#pragma once

#include "shardc/ir/Types.h"

#include <dnnl.hpp>

namespace shardc::dnnl_glue {

struct Context {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

// A plain f32 descriptor with the given dims and strides (in elements).
inline dnnl::memory::desc f32Desc(const dnnl::memory::dims& dims,
                                  const dnnl::memory::dims& strides) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

// Row-major strides of `dims`.
inline dnnl::memory::dims rowMajor(const dnnl::memory::dims& dims) {
  dnnl::memory::dims s(dims.size());
  dnnl::memory::dim acc = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    s[i] = acc;
    acc *= dims[i];
  }
  return s;
}

inline dnnl::memory::dims toDims(const Shape& s) {
  return dnnl::memory::dims(s.begin(), s.end());
}

} // namespace shardc::dnnl_glue
