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

// Whether oneDNN runs bf16 on the CPU's own bf16 instructions (AVX512-BF16 or AMX, as oneDNN
// sees the CPU: DNNL_MAX_CPU_ISA caps it). Without them it emulates bf16 at a quarter of its
// f32 rate, or has only its reference loop: bf16 steps then compute in f32.
inline bool bf16Hardware() {
  auto isa = static_cast<unsigned>(dnnl_cpu_isa_avx512_core_bf16);
  return (static_cast<unsigned>(dnnl::get_effective_cpu_isa()) & isa) == isa;
}

inline dnnl::memory::dims toDims(const Shape& s) {
  return dnnl::memory::dims(s.begin(), s.end());
}

} // namespace shardc::dnnl_glue
