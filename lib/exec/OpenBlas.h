// OpenBLAS's sgemm for the matmul kernel, loaded at first use. On this project's AMD host
// its single-threaded sgemm, split over the device's threads by the caller, reaches
// 120-130 GFLOP/s on the GPT's GEMM shapes, against 90-110 for oneDNN 2.6's (and 55-90
// where the source is transposed, as in every weight gradient); bench/gemm_libraries.py
// measures both side by side.
#pragma once

#include <cstdint>
#include <string>

namespace shardc::openblas {

// Whether GEMMs go to OpenBLAS: it loaded, and the environment's SHARDC_GEMM (openblas or
// onednn; unset: OpenBLAS where it loads) does not say oneDNN. Throws shardc::Error for
// another SHARDC_GEMM, or for openblas when the library does not load.
bool available();

// Whether SHARDC_GEMM names the library (else each GEMM shape's library is measured,
// GemmChoice.h).
bool chosenByUser();
// The loaded library's own description (version, core type); "" when it did not load.
std::string config();

// Row-major C = op(A) op(B) + beta C on the calling thread only; A is m x k after op, B
// k x n, C m x n. Safe to call from several threads at once.
void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

} // namespace shardc::openblas
