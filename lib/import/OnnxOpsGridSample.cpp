// ONNX GridSample (bilinear, nearest, bicubic; zeros, border, reflection padding), as
// PyTorch's grid_sample, which the spec follows: source coordinates from the grid, then
// gathers of the input's pixels at flat indices, weighted.
#include "OnnxContext.h"

#include <optional>

namespace shardc::onnximport {
namespace {

struct Sampler {
  Entry rows;        // the input as [N * H * W, C]
  Entry batchOffset; // n * H * W, [N, Ho, Wo]
  int64_t h, w;
  DType t;
  std::string padding;
  bool alignCorners;
};

Entry fscalar(Context& c, const Sampler& s, double v) {
  return c.scalar(s.t, v);
}

// Grid value in [-1, 1] to a pixel coordinate along a dim of `size` pixels.
Entry unnormalize(Context& c, const Sampler& s, Entry g, int64_t size) {
  Entry one = fscalar(c, s, 1);
  if (s.alignCorners)
    return c.emit1("mul",
                   {c.emit1("add", {g, one}), fscalar(c, s, static_cast<double>(size - 1) / 2)});
  Entry scaled =
      c.emit1("mul", {c.emit1("add", {g, one}), fscalar(c, s, static_cast<double>(size))});
  return c.emit1("div", {c.emit1("sub", {scaled, one}), fscalar(c, s, 2)});
}

Entry clip(Context& c, const Sampler& s, Entry x, int64_t size) {
  return c.emit1(
      "min", {c.emit1("max", {x, fscalar(c, s, 0)}), fscalar(c, s, static_cast<double>(size - 1))});
}

// Reflects x into [low, high] (given doubled, as PyTorch's reflect_coordinates).
Entry reflect(Context& c, const Sampler& s, Entry x, int64_t twiceLow, int64_t twiceHigh) {
  if (twiceLow == twiceHigh) return c.emit1("mul", {x, fscalar(c, s, 0)});
  double low = static_cast<double>(twiceLow) / 2,
         span = static_cast<double>(twiceHigh - twiceLow) / 2;
  Entry a = c.emit1("abs", {c.emit1("sub", {x, fscalar(c, s, low)})});
  Entry flips = c.emit1("floor", {c.emit1("div", {a, fscalar(c, s, span)})});
  Entry extra = c.emit1("sub", {a, c.emit1("mul", {flips, fscalar(c, s, span)})});
  Entry two = fscalar(c, s, 2);
  Entry odd = c.emit1(
      "compare", {flips, c.emit1("mul", {c.emit1("floor", {c.emit1("div", {flips, two})}), two})},
      {{"direction", "ne"}});
  Entry forward = c.emit1("add", {extra, fscalar(c, s, low)});
  Entry backward = c.emit1("sub", {fscalar(c, s, span + low), extra});
  return c.emit1("where", {odd, backward, forward});
}

// Border and reflection padding move a coordinate into the input; zeros keeps it.
Entry applyPadding(Context& c, const Sampler& s, Entry x, int64_t size) {
  if (s.padding == "border") return clip(c, s, x, size);
  if (s.padding == "reflection")
    return clip(c, s,
                s.alignCorners ? reflect(c, s, x, 0, 2 * (size - 1))
                               : reflect(c, s, x, -1, 2 * size - 1),
                size);
  return x;
}

Entry sourceIndex(Context& c, const Sampler& s, Entry g, int64_t size) {
  return applyPadding(c, s, unnormalize(c, s, g, size), size);
}

// The pixels at integer-valued coordinates (ix, iy) as [N, Ho, Wo, C]; 0 outside.
Entry pixels(Context& c, const Sampler& s, Entry ix, Entry iy) {
  auto within = [&](Entry v, int64_t size) {
    return c.emit1("and", {c.emit1("compare", {v, fscalar(c, s, 0)}, {{"direction", "ge"}}),
                           c.emit1("compare", {v, fscalar(c, s, static_cast<double>(size))},
                                   {{"direction", "lt"}})});
  };
  Entry inside = c.emit1("and", {within(ix, s.w), within(iy, s.h)});
  // Outside (or NaN) coordinates read pixel 0 and are zeroed after the gather.
  auto index = [&](Entry v) {
    return c.emit1("cast", {c.emit1("where", {inside, v, fscalar(c, s, 0)})}, {{"to", DType::I64}});
  };
  Entry flat = c.emit1(
      "add",
      {s.batchOffset,
       c.emit1("add", {c.emit1("mul", {index(iy), c.scalar(DType::I64, static_cast<double>(s.w))}),
                       index(ix)})});
  Entry v = c.emit1("gather", {s.rows, flat}, {{"axis", int64_t(0)}});
  Shape is = c.typeOf(inside).shape;
  is.push_back(1);
  return c.emit1("where", {c.emit1("reshape", {inside}, {{"shape", is}}), v, fscalar(c, s, 0)});
}

// A weight [N, Ho, Wo] times pixels [N, Ho, Wo, C].
Entry weighted(Context& c, Entry weight, Entry px) {
  Shape ws = c.typeOf(weight).shape;
  ws.push_back(1);
  return c.emit1("mul", {c.emit1("reshape", {weight}, {{"shape", ws}}), px});
}

Entry accumulate(Context& c, std::optional<Entry> sum, Entry term) {
  return sum ? c.emit1("add", {*sum, term}) : term;
}

Entry bilinear(Context& c, const Sampler& s, Entry gx, Entry gy) {
  Entry ix = sourceIndex(c, s, gx, s.w), iy = sourceIndex(c, s, gy, s.h);
  Entry one = fscalar(c, s, 1);
  Entry x0 = c.emit1("floor", {ix}), y0 = c.emit1("floor", {iy});
  Entry x1 = c.emit1("add", {x0, one}), y1 = c.emit1("add", {y0, one});
  Entry wx[2] = {c.emit1("sub", {x1, ix}), c.emit1("sub", {ix, x0})};
  Entry wy[2] = {c.emit1("sub", {y1, iy}), c.emit1("sub", {iy, y0})};
  Entry xs[2] = {x0, x1}, ys[2] = {y0, y1};
  std::optional<Entry> sum;
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 2; ++i)
      sum = accumulate(c, sum,
                       weighted(c, c.emit1("mul", {wx[i], wy[j]}), pixels(c, s, xs[i], ys[j])));
  return *sum;
}

Entry nearest(Context& c, const Sampler& s, Entry gx, Entry gy) {
  Entry ix = roundHalfToEven(c, sourceIndex(c, s, gx, s.w)),
        iy = roundHalfToEven(c, sourceIndex(c, s, gy, s.h));
  return pixels(c, s, ix, iy);
}

// The 4 cubic convolution weights (A = -0.75) of taps -1, 0, 1, 2 at fraction t.
std::vector<Entry> cubicWeights(Context& c, const Sampler& s, Entry t) {
  const double a = -0.75;
  auto near = [&](Entry x) { // ((A + 2) x - (A + 3)) x^2 + 1, for |x| <= 1
    Entry p = c.emit1("sub", {c.emit1("mul", {x, fscalar(c, s, a + 2)}), fscalar(c, s, a + 3)});
    return c.emit1("add", {c.emit1("mul", {c.emit1("mul", {p, x}), x}), fscalar(c, s, 1)});
  };
  auto far = [&](Entry x) { // ((A x - 5A) x + 8A) x - 4A, for 1 < |x| < 2
    Entry p = c.emit1("sub", {c.emit1("mul", {x, fscalar(c, s, a)}), fscalar(c, s, 5 * a)});
    p = c.emit1("add", {c.emit1("mul", {p, x}), fscalar(c, s, 8 * a)});
    return c.emit1("sub", {c.emit1("mul", {p, x}), fscalar(c, s, 4 * a)});
  };
  Entry one = fscalar(c, s, 1);
  return {far(c.emit1("add", {t, one})), near(t), near(c.emit1("sub", {one, t})),
          far(c.emit1("sub", {fscalar(c, s, 2), t}))};
}

// Bicubic: 4 x 4 taps around the unnormalized coordinate, each moved by the padding.
Entry bicubic(Context& c, const Sampler& s, Entry gx, Entry gy) {
  Entry ix = unnormalize(c, s, gx, s.w), iy = unnormalize(c, s, gy, s.h);
  Entry x0 = c.emit1("floor", {ix}), y0 = c.emit1("floor", {iy});
  std::vector<Entry> wx = cubicWeights(c, s, c.emit1("sub", {ix, x0})),
                     wy = cubicWeights(c, s, c.emit1("sub", {iy, y0}));
  std::optional<Entry> sum;
  for (int j = 0; j < 4; ++j) {
    Entry ty = applyPadding(c, s, c.emit1("add", {y0, fscalar(c, s, j - 1)}), s.h);
    std::optional<Entry> row;
    for (int i = 0; i < 4; ++i) {
      Entry tx = applyPadding(c, s, c.emit1("add", {x0, fscalar(c, s, i - 1)}), s.w);
      row = accumulate(c, row, weighted(c, wx[static_cast<size_t>(i)], pixels(c, s, tx, ty)));
    }
    sum = accumulate(c, sum, weighted(c, wy[static_cast<size_t>(j)], *row));
  }
  return *sum;
}

std::vector<Entry> gridSample(Context& c) {
  Entry x = c.in(0), grid = c.in(1);
  TensorType xt = c.typeOf(x), gt = c.typeOf(grid);
  if (xt.rank() != 4 || !isFloat(xt.dtype))
    c.fail("only 4-D floating-point inputs are supported, got " + xt.str());
  if (gt.rank() != 4 || gt.shape[0] != xt.shape[0] || gt.shape[3] != 2 || gt.dtype != xt.dtype)
    c.fail("the grid " + gt.str() +
           " must be [N, H_out, W_out, 2] of the input's type, for input " + xt.str());
  std::string mode = c.attrString("mode", "bilinear");
  Sampler s{x,
            x,
            xt.shape[2],
            xt.shape[3],
            xt.dtype,
            c.attrString("padding_mode", "zeros"),
            c.attrInt("align_corners", 0) != 0};
  if (s.padding != "zeros" && s.padding != "border" && s.padding != "reflection")
    c.fail("unknown padding_mode '" + s.padding + "'");
  int64_t n = xt.shape[0], ch = xt.shape[1];
  Shape outer(gt.shape.begin(), gt.shape.end() - 1);
  s.rows =
      c.emit1("reshape", {c.emit1("transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}})},
              {{"shape", std::vector<int64_t>{n * s.h * s.w, ch}}});
  s.batchOffset = c.emit1("mul", {c.emit1("iota", {}, {{"shape", outer}, {"axis", int64_t(0)}}),
                                  c.scalar(DType::I64, static_cast<double>(s.h * s.w))});
  auto coord = [&](int64_t k) {
    Entry g = c.emit1("slice", {grid},
                      {{"start", std::vector<int64_t>{0, 0, 0, k}},
                       {"limit", std::vector<int64_t>{outer[0], outer[1], outer[2], k + 1}},
                       {"stride", std::vector<int64_t>{1, 1, 1, 1}}});
    return c.emit1("reshape", {g}, {{"shape", outer}});
  };
  Entry gx = coord(0), gy = coord(1);
  Entry y;
  if (mode == "bilinear")
    y = bilinear(c, s, gx, gy);
  else if (mode == "nearest")
    y = nearest(c, s, gx, gy);
  else if (mode == "bicubic")
    y = bicubic(c, s, gx, gy);
  else
    c.fail("unknown mode '" + mode + "'");
  return c.emit("transpose", {y}, {{"perm", std::vector<int64_t>{0, 3, 1, 2}}});
}

} // namespace

void registerGridSampleImports(OpTable& t) {
  t["GridSample"] = gridSample;
}

} // namespace shardc::onnximport
