// The reference kernels of conv2d and its two backward ops, in double: each image and group
// unfolded (im2col) a block of output positions at a time and multiplied by cache-blocked
// loops. The interpreter and every non-f32 compiled conv run them, so their speed bounds the
// float64 and reference test runs.
#pragma once

#include "WindowUtil.h"

#include <vector>

namespace shardc::ops {

struct ConvDims {
  int64_t n, c, h, w;  // x [N,C,H,W]
  int64_t f, cpg, fpg; // w [F,C/groups,KH,KW]; output channels per group
  int64_t groups;      //
  int64_t oh, ow;      // out [N,F,OH,OW]
  Window win;          // kernel size, strides, pads, dilations
  int64_t taps() const { return cpg * win.kh * win.kw; }
};

// The dims of conv2d of x `xs` by w `ws` into `os`, the attributes already verified.
ConvDims convDims(const Shape& xs, const Shape& ws, const Shape& os, const AttrDict& attrs);

// out [N,F,OH,OW]; each output starts from its bias (when given) and adds its taps in the
// order channel, kernel row, kernel column.
std::vector<double> convForward(const ConvDims& d, const double* x, const double* w,
                                const double* bias);
// dx [N,C,H,W] from dy [N,F,OH,OW] and w.
std::vector<double> convBackwardInput(const ConvDims& d, const double* dy, const double* w);
// dw [F,C/groups,KH,KW] from x and dy.
std::vector<double> convBackwardFilter(const ConvDims& d, const double* x, const double* dy);

} // namespace shardc::ops
