// Sliding windows over NCHW tensors, shared by convolution and pooling, forward and backward.
// pads = [top, left, bottom, right].
#pragma once

#include "shardc/ops/OpRegistry.h"

#include <string>
#include <vector>

namespace shardc::ops {

// Output size along one dim; <= 0 when the window does not fit.
int64_t windowOut(int64_t in, int64_t padA, int64_t padB, int64_t k, int64_t d, int64_t s);

struct Window {
  int64_t kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  int64_t outH(int64_t h) const { return windowOut(h, pt, pb, kh, dh, sh); }
  int64_t outW(int64_t w) const { return windowOut(w, pl, pr, kw, dw, sw); }
  // Input row/column of tap (ky, kx) of output (oy, ox); may fall in the padding.
  int64_t row(int64_t oy, int64_t ky) const { return oy * sh - pt + ky * dh; }
  int64_t col(int64_t ox, int64_t kx) const { return ox * sw - pl + kx * dw; }
};

// The strides, pads and dilations attributes with kernel kh x kw; "" on success.
std::string readWindow(const AttrDict& attrs, int64_t kh, int64_t kw, Window& w);
// The output [OH, OW] of the window over x [N,C,H,W]; "" on success.
std::string windowOutput(const TensorType& x, const Window& w, Shape& hw);
// strides, pads and dilations with their defaults.
std::vector<AttrSpec> windowAttrs();
// `names` copied from an op's attributes (the backward ops repeat the forward's).
AttrDict copyAttrs(const AttrDict& from, const std::vector<const char*>& names);

// The conv2d result for x and w (bias aside), x and w already checked to be rank 4 of one
// float type; "" on success. The backward ops reuse it on the forward's operand types.
std::string conv2dResult(const TensorType& x, const TensorType& w, const AttrDict& attrs,
                         TensorType& out);
// The max_pool2d/avg_pool2d result for x, already checked to be a float [N,C,H,W].
std::string pool2dResult(const TensorType& x, const AttrDict& attrs, TensorType& out);

// Reads a shape attribute of a backward op (input_shape, filter_shape): 4 dims, none
// negative; "" on success.
std::string shape4Attr(const AttrDict& attrs, const char* name, const char* layout, Shape& out);
// "" if the backward op's incoming gradient `dy` is the type its forward op gives (`want`),
// else a message naming both.
std::string checkGradType(const char* forward, const TensorType& dy, const TensorType& want,
                          const std::string& forwardOperands);

} // namespace shardc::ops
