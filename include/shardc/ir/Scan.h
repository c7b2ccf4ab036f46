// The layout of a `scan` op (lib/ops/CallOp.cpp): a loop over the leading dimension of its
// stacked operands that runs its callee once per step, the way a model's repeated layers run
// one body over stacked per-layer weights.
//
//   operands: carried (carried), shared (shared), stacked xs ([length, ...] each)
//   callee:   (carried, shared, one slice of each xs) -> (new carried, one slice of each ys)
//   results:  final carried, stacked ys ([length, ...] each), and with save_carries the
//             carried values each step started from, stacked
//
// Steps run from 0 to length - 1, or backwards with `reverse` (step i always reads slice i).
#pragma once

#include "shardc/ir/Types.h"

#include <cstddef>
#include <cstdint>

namespace shardc {
class Op;

struct ScanLayout {
  int64_t length = 0;
  size_t carried = 0, shared = 0, ys = 0;
  bool reverse = false, saveCarries = false;

  static ScanLayout of(const Op& scan); // the op must have verified attributes
  size_t firstX() const { return carried + shared; }
  size_t firstY() const { return carried; }
  size_t firstSaved() const { return carried + ys; }
  // The step run at position `i` of the loop.
  int64_t step(int64_t i) const { return reverse ? length - 1 - i : i; }
};

bool isScan(const Op& op);
// How many times a call or scan op runs its callee: a scan's length, else 1.
int64_t runsOf(const Op& call);
// `t` stacked `length` times along a new leading dimension.
TensorType stackedType(int64_t length, TensorType t);

} // namespace shardc
