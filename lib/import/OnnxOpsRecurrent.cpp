// ONNX RNN, GRU and LSTM, unrolled over the (static) sequence length into matmuls and
// elementwise ops. sequence_lens masks the steps past each sequence's end: the state stays
// and the output is 0, which in reverse direction also starts each sequence at its end.
#include "OnnxContext.h"

#include <optional>

namespace shardc::onnximport {
namespace {

enum class Cell { RNN, GRU, LSTM };

int64_t gateCount(Cell cell) { return cell == Cell::RNN ? 1 : cell == Cell::GRU ? 3 : 4; }

std::vector<std::string> defaultActivations(Cell cell) {
  if (cell == Cell::RNN) return {"Tanh"};
  if (cell == Cell::GRU) return {"Sigmoid", "Tanh"};
  return {"Sigmoid", "Tanh", "Tanh"};
}

struct Recurrence {
  Cell cell;
  int64_t hidden = 0, steps = 0, batch = 0;
  bool linearBeforeReset = false;
  std::optional<Entry> lens; // [batch, 1]
};

// One direction's weights, transposed for x @ w: wT [I, G*H], rT [H, G*H].
struct DirectionWeights {
  Entry wT, rT;
  std::optional<Entry> wb, rb, peep; // [G*H], [G*H], [3*H]
  std::vector<std::string> acts;
};

Entry sliceRows(Context& c, Entry x, int64_t d) {
  Shape s = c.typeOf(x).shape;
  std::vector<int64_t> start(s.size(), 0), limit = s, stride(s.size(), 1);
  start[0] = d;
  limit[0] = d + 1;
  Shape rest(s.begin() + 1, s.end());
  return c.emit1("reshape", {c.emit1("slice", {x}, {{"start", start}, {"limit", limit}, {"stride", stride}})}, {{"shape", rest}});
}

// Columns [from, to) of a 2-D x, or elements of a 1-D x.
Entry sliceLast(Context& c, Entry x, int64_t from, int64_t to) {
  Shape s = c.typeOf(x).shape;
  std::vector<int64_t> start(s.size(), 0), limit = s, stride(s.size(), 1);
  start.back() = from;
  limit.back() = to;
  return c.emit1("slice", {x}, {{"start", start}, {"limit", limit}, {"stride", stride}});
}

Entry activate(Context& c, const std::string& name, Entry x) {
  if (name == "Sigmoid") return c.emit1("sigmoid", {x});
  if (name == "Tanh") return c.emit1("tanh", {x});
  return c.emit1("relu", {x}); // the only other name the importer accepts
}

Entry addOptional(Context& c, Entry x, const std::optional<Entry>& b) { return b ? c.emit1("add", {x, *b}) : x; }

struct State {
  Entry h;
  std::optional<Entry> cell; // LSTM only
};

// One step: the new state from x @ W^T + Wb (xw, [B, G*H]) and the previous state.
State step(Context& c, const Recurrence& r, const DirectionWeights& w, Entry xw, const State& prev) {
  int64_t n = r.hidden;
  const auto& f = w.acts;
  if (r.cell == Cell::RNN) return {activate(c, f[0], addOptional(c, c.emit1("add", {xw, c.emit1("matmul", {prev.h, w.rT})}), w.rb))};
  if (r.cell == Cell::GRU) {
    // Gates z, r, h; the reset gate applies before or after h's recurrent matmul.
    Entry hzr = addOptional(c, c.emit1("matmul", {prev.h, sliceLast(c, w.rT, 0, 2 * n)}),
                            w.rb ? std::optional<Entry>(sliceLast(c, *w.rb, 0, 2 * n)) : std::nullopt);
    Entry z = activate(c, f[0], c.emit1("add", {sliceLast(c, xw, 0, n), sliceLast(c, hzr, 0, n)}));
    Entry reset = activate(c, f[0], c.emit1("add", {sliceLast(c, xw, n, 2 * n), sliceLast(c, hzr, n, 2 * n)}));
    Entry rhT = sliceLast(c, w.rT, 2 * n, 3 * n);
    std::optional<Entry> rbh = w.rb ? std::optional<Entry>(sliceLast(c, *w.rb, 2 * n, 3 * n)) : std::nullopt;
    Entry recurrent = r.linearBeforeReset
                          ? c.emit1("mul", {reset, addOptional(c, c.emit1("matmul", {prev.h, rhT}), rbh)})
                          : addOptional(c, c.emit1("matmul", {c.emit1("mul", {reset, prev.h}), rhT}), rbh);
    Entry hh = activate(c, f[1], c.emit1("add", {sliceLast(c, xw, 2 * n, 3 * n), recurrent}));
    Entry one = c.scalar(c.typeOf(hh).dtype, 1);
    Entry keep = c.emit1("mul", {z, prev.h});
    return {c.emit1("add", {c.emit1("mul", {c.emit1("sub", {one, z}), hh}), keep})};
  }
  // LSTM gates i, o, f, c; peepholes i, o, f.
  Entry pre = addOptional(c, c.emit1("add", {xw, c.emit1("matmul", {prev.h, w.rT})}), w.rb);
  auto gate = [&](int64_t k) { return sliceLast(c, pre, k * n, (k + 1) * n); };
  auto peep = [&](int64_t k, Entry cell) {
    return w.peep ? std::optional<Entry>(c.emit1("mul", {sliceLast(c, *w.peep, k * n, (k + 1) * n), cell})) : std::nullopt;
  };
  Entry i = activate(c, f[0], addOptional(c, gate(0), peep(0, *prev.cell)));
  Entry fg = activate(c, f[0], addOptional(c, gate(2), peep(2, *prev.cell)));
  Entry cc = activate(c, f[1], gate(3));
  Entry cell = c.emit1("add", {c.emit1("mul", {fg, *prev.cell}), c.emit1("mul", {i, cc})});
  Entry o = activate(c, f[0], addOptional(c, gate(1), peep(1, cell)));
  return {c.emit1("mul", {o, activate(c, f[2], cell)}), cell};
}

// Runs one direction over all steps; returns each step's output ([B, H]) and the final
// state.
std::pair<std::vector<Entry>, State> runDirection(Context& c, const Recurrence& r, const DirectionWeights& w,
                                                  Entry x, State state, bool reverse) {
  // x @ W^T + Wb for all steps at once: [T, B, G*H].
  Entry xw = addOptional(c, c.emit1("matmul", {x, w.wT}), w.wb);
  std::vector<Entry> ys(static_cast<size_t>(r.steps));
  for (int64_t k = 0; k < r.steps; ++k) {
    int64_t t = reverse ? r.steps - 1 - k : k;
    State next = step(c, r, w, sliceRows(c, xw, t), state);
    Entry y = next.h;
    if (r.lens) {
      Entry valid = c.emit1("compare", {*r.lens, c.scalar(c.typeOf(*r.lens).dtype, static_cast<double>(t))}, {{"direction", "gt"}});
      next.h = c.emit1("where", {valid, next.h, state.h});
      if (next.cell) next.cell = c.emit1("where", {valid, *next.cell, *state.cell});
      y = c.emit1("where", {valid, y, c.scalar(c.typeOf(y).dtype, 0)});
    }
    ys[static_cast<size_t>(t)] = y;
    state = next;
  }
  return {ys, state};
}

ImportFn recurrent(Cell cell) {
  return [cell](Context& c) {
    Entry x = c.in(0), w = c.in(1), rw = c.in(2);
    TensorType xt = c.typeOf(x), wt = c.typeOf(w), rt = c.typeOf(rw);
    bool batchFirst = c.attrInt("layout", 0) != 0;
    if (xt.rank() != 3 || wt.rank() != 3 || rt.rank() != 3) c.fail("X, W and R must be 3-D");
    if (batchFirst) x = c.emit1("transpose", {x}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
    Shape xs = c.typeOf(x).shape;
    Recurrence r{cell, c.attrInt("hidden_size", rt.shape[2]), xs[0], xs[1], false, std::nullopt};
    int64_t g = gateCount(cell), n = r.hidden;
    std::string direction = c.attrString("direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional") c.fail("unknown direction '" + direction + "'");
    int64_t dirs = direction == "bidirectional" ? 2 : 1;
    if (wt.shape != Shape{dirs, g * n, xs[2]} || rt.shape != Shape{dirs, g * n, n})
      c.fail("W " + wt.str() + " and R " + rt.str() + " do not match " + std::to_string(dirs) + " direction(s), hidden_size " + std::to_string(n) + " and input " + xt.str());
    if (c.hasAttr("clip")) c.fail("clip is not supported yet");
    if (cell == Cell::LSTM && c.attrInt("input_forget", 0)) c.fail("input_forget = 1 is not supported yet");
    if (cell == Cell::GRU) r.linearBeforeReset = c.attrInt("linear_before_reset", 0) != 0;
    std::vector<std::string> acts, perDirDefault = defaultActivations(cell);
    for (int64_t d = 0; d < dirs; ++d) acts.insert(acts.end(), perDirDefault.begin(), perDirDefault.end());
    acts = c.attrStrings("activations", acts);
    size_t perDir = perDirDefault.size();
    if (acts.size() != perDir * static_cast<size_t>(dirs)) c.fail("activations needs " + std::to_string(perDir * static_cast<size_t>(dirs)) + " entries");
    for (const std::string& a : acts)
      if (a != "Sigmoid" && a != "Tanh" && a != "Relu") c.fail("activation '" + a + "' is not supported yet (supported: Sigmoid, Tanh, Relu)");
    // Sigmoid, Tanh and Relu take no alpha or beta.
    c.ignoreAttr("activation_alpha");
    c.ignoreAttr("activation_beta");
    if (c.hasInput(4)) {
      Entry lens = c.in(4);
      if (c.typeOf(lens).shape != Shape{r.batch} || !isInteger(c.typeOf(lens).dtype)) c.fail("sequence_lens must hold one integer per batch entry");
      r.lens = c.emit1("reshape", {lens}, {{"shape", std::vector<int64_t>{r.batch, 1}}});
    }
    // Initial states [dirs, B, H] ([B, dirs, H] with layout = 1), default 0.
    auto initial = [&](size_t i) -> std::optional<Entry> {
      if (!c.hasInput(i)) return std::nullopt;
      Entry s = c.in(i);
      if (batchFirst) s = c.emit1("transpose", {s}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
      if (c.typeOf(s).shape != Shape{dirs, r.batch, n}) c.fail("initial state " + c.typeOf(c.in(i)).str() + " has the wrong shape");
      return s;
    };
    std::optional<Entry> h0 = initial(5), c0 = cell == Cell::LSTM ? initial(6) : std::nullopt;
    Entry zeros = c.emit1("broadcast", {c.scalar(xt.dtype, 0)}, {{"shape", std::vector<int64_t>{r.batch, n}}});
    std::vector<Entry> yDirs, hDirs, cDirs;
    for (int64_t d = 0; d < dirs; ++d) {
      DirectionWeights dw{c.emit1("transpose", {sliceRows(c, w, d)}, {{"perm", std::vector<int64_t>{1, 0}}}),
                          c.emit1("transpose", {sliceRows(c, rw, d)}, {{"perm", std::vector<int64_t>{1, 0}}}),
                          std::nullopt, std::nullopt, std::nullopt,
                          std::vector<std::string>(acts.begin() + static_cast<long>(perDir) * d, acts.begin() + static_cast<long>(perDir) * (d + 1))};
      if (c.hasInput(3)) {
        if (c.typeOf(c.in(3)).shape != Shape{dirs, 2 * g * n}) c.fail("B must be [num_directions, " + std::to_string(2 * g * n) + "]");
        Entry b = sliceRows(c, c.in(3), d);
        dw.wb = sliceLast(c, b, 0, g * n);
        dw.rb = sliceLast(c, b, g * n, 2 * g * n);
      }
      if (cell == Cell::LSTM && c.hasInput(7)) {
        if (c.typeOf(c.in(7)).shape != Shape{dirs, 3 * n}) c.fail("P must be [num_directions, " + std::to_string(3 * n) + "]");
        dw.peep = sliceRows(c, c.in(7), d);
      }
      State s0{h0 ? sliceRows(c, *h0, d) : zeros, std::nullopt};
      if (cell == Cell::LSTM) s0.cell = c0 ? sliceRows(c, *c0, d) : zeros;
      bool reverse = direction == "reverse" || d == 1;
      auto [ys, last] = runDirection(c, r, dw, x, s0, reverse);
      for (Entry& y : ys) y = c.emit1("reshape", {y}, {{"shape", std::vector<int64_t>{1, 1, r.batch, n}}});
      yDirs.push_back(r.steps == 1 ? ys[0] : c.emit1("concat", ys, {{"axis", int64_t(0)}}));
      hDirs.push_back(c.emit1("reshape", {last.h}, {{"shape", std::vector<int64_t>{1, r.batch, n}}}));
      if (last.cell) cDirs.push_back(c.emit1("reshape", {*last.cell}, {{"shape", std::vector<int64_t>{1, r.batch, n}}}));
    }
    auto join = [&](std::vector<Entry>& parts, int64_t axis) { return parts.size() == 1 ? parts[0] : c.emit1("concat", parts, {{"axis", axis}}); };
    // Y [T, dirs, B, H] and Y_h, Y_c [dirs, B, H]; batch first with layout = 1.
    Entry y = join(yDirs, 1), yh = join(hDirs, 0);
    std::optional<Entry> yc = cDirs.empty() ? std::nullopt : std::optional<Entry>(join(cDirs, 0));
    if (batchFirst) {
      y = c.emit1("transpose", {y}, {{"perm", std::vector<int64_t>{2, 0, 1, 3}}});
      yh = c.emit1("transpose", {yh}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
      if (yc) yc = c.emit1("transpose", {*yc}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
    }
    std::vector<Entry> out{y, yh};
    if (yc) out.push_back(*yc);
    return out;
  };
}

} // namespace

void registerRecurrentImports(OpTable& t) {
  t["RNN"] = recurrent(Cell::RNN);
  t["GRU"] = recurrent(Cell::GRU);
  t["LSTM"] = recurrent(Cell::LSTM);
}

} // namespace shardc::onnximport
