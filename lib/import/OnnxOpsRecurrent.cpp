// ONNX RNN, GRU and LSTM, unrolled over the (static) sequence length into matmuls and
// elementwise ops. sequence_lens masks the steps past each sequence's end: the state stays
// and the output is 0, which in reverse direction also starts each sequence at its end.
#include "OnnxContext.h"

#include <optional>

namespace shardc::onnximport {
namespace {

enum class Cell { RNN, GRU, LSTM };

int64_t gateCount(Cell cell) {
  return cell == Cell::RNN ? 1 : cell == Cell::GRU ? 3 : 4;
}

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

// One direction's weights, transposed for x @ w: wT [I, G*H], rT [H, G*H]. For GRU, rT and
// rb hold only the z and r gates; the h gate's are rhT [H, H] and rbh [H].
struct DirectionWeights {
  Entry wT, rT;
  std::optional<Entry> wb, rb, peep; // [G*H], [G*H], [3*H]
  std::vector<std::string> acts;
  std::optional<Entry> rhT, rbh;
};

Entry sliceRows(Context& c, Entry x, int64_t d) {
  Shape s = c.typeOf(x).shape;
  std::vector<int64_t> start(s.size(), 0), limit = s, stride(s.size(), 1);
  start[0] = d;
  limit[0] = d + 1;
  Shape rest(s.begin() + 1, s.end());
  return c.emit1("reshape",
                 {c.emit1("slice", {x}, {{"start", start}, {"limit", limit}, {"stride", stride}})},
                 {{"shape", rest}});
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

Entry addOptional(Context& c, Entry x, const std::optional<Entry>& b) {
  return b ? c.emit1("add", {x, *b}) : x;
}

struct State {
  Entry h;
  std::optional<Entry> cell; // LSTM only
};

// One step of each cell: the new state from x @ W^T + Wb (xw, [B, G*H]) and the previous
// state.
State rnnStep(Context& c, const DirectionWeights& w, Entry xw, const State& prev) {
  Entry pre = addOptional(c, c.emit1("add", {xw, c.emit1("matmul", {prev.h, w.rT})}), w.rb);
  return State{activate(c, w.acts[0], pre), std::nullopt};
}

// Gates z, r, h; the reset gate applies before or after h's recurrent matmul.
State gruStep(Context& c, const Recurrence& r, const DirectionWeights& w, Entry xw,
              const State& prev) {
  int64_t n = r.hidden;
  Entry hzr = addOptional(c, c.emit1("matmul", {prev.h, w.rT}), w.rb);
  auto gate = [&](int64_t k) {
    return c.emit1("add",
                   {sliceLast(c, xw, k * n, (k + 1) * n), sliceLast(c, hzr, k * n, (k + 1) * n)});
  };
  Entry z = activate(c, w.acts[0], gate(0)), reset = activate(c, w.acts[0], gate(1));
  Entry recurrent =
      r.linearBeforeReset
          ? c.emit1("mul", {reset, addOptional(c, c.emit1("matmul", {prev.h, *w.rhT}), w.rbh)})
          : addOptional(c, c.emit1("matmul", {c.emit1("mul", {reset, prev.h}), *w.rhT}), w.rbh);
  Entry hh = activate(c, w.acts[1], c.emit1("add", {sliceLast(c, xw, 2 * n, 3 * n), recurrent}));
  // (1 - z) * hh + z * h
  Entry fresh = c.emit1("mul", {c.emit1("sub", {c.scalar(c.typeOf(hh).dtype, 1), z}), hh});
  return State{c.emit1("add", {fresh, c.emit1("mul", {z, prev.h})}), std::nullopt};
}

// Gates i, o, f, c; peepholes i, o, f.
State lstmStep(Context& c, const Recurrence& r, const DirectionWeights& w, Entry xw,
               const State& prev) {
  int64_t n = r.hidden;
  const auto& f = w.acts;
  Entry pre = addOptional(c, c.emit1("add", {xw, c.emit1("matmul", {prev.h, w.rT})}), w.rb);
  auto gate = [&](int64_t k, std::optional<Entry> peepCell) {
    Entry g = sliceLast(c, pre, k * n, (k + 1) * n);
    if (!w.peep || !peepCell) return g;
    return c.emit1("add",
                   {g, c.emit1("mul", {sliceLast(c, *w.peep, k * n, (k + 1) * n), *peepCell})});
  };
  Entry i = activate(c, f[0], gate(0, prev.cell)), fg = activate(c, f[0], gate(2, prev.cell));
  Entry cell = c.emit1("add", {c.emit1("mul", {fg, *prev.cell}),
                               c.emit1("mul", {i, activate(c, f[1], gate(3, std::nullopt))})});
  Entry o = activate(c, f[0], gate(1, cell));
  return State{c.emit1("mul", {o, activate(c, f[2], cell)}), cell};
}

State step(Context& c, const Recurrence& r, const DirectionWeights& w, Entry xw,
           const State& prev) {
  if (r.cell == Cell::RNN) return rnnStep(c, w, xw, prev);
  if (r.cell == Cell::GRU) return gruStep(c, r, w, xw, prev);
  return lstmStep(c, r, w, xw, prev);
}

// Runs one direction over all steps; returns each step's output ([B, H]) and the final
// state.
std::pair<std::vector<Entry>, State> runDirection(Context& c, const Recurrence& r,
                                                  const DirectionWeights& w, Entry x, State state,
                                                  bool reverse) {
  // x @ W^T + Wb for all steps at once: [T, B, G*H].
  Entry xw = addOptional(c, c.emit1("matmul", {x, w.wT}), w.wb);
  std::vector<Entry> ys(static_cast<size_t>(r.steps));
  for (int64_t k = 0; k < r.steps; ++k) {
    int64_t t = reverse ? r.steps - 1 - k : k;
    State next = step(c, r, w, sliceRows(c, xw, t), state);
    Entry y = next.h;
    if (r.lens) {
      Entry valid =
          c.emit1("compare", {*r.lens, c.scalar(c.typeOf(*r.lens).dtype, static_cast<double>(t))},
                  {{"direction", "gt"}});
      next.h = c.emit1("where", {valid, next.h, state.h});
      if (next.cell) next.cell = c.emit1("where", {valid, *next.cell, *state.cell});
      y = c.emit1("where", {valid, y, c.scalar(c.typeOf(y).dtype, 0)});
    }
    ys[static_cast<size_t>(t)] = y;
    state = next;
  }
  return {ys, state};
}

// The activations, per direction: the defaults, or the attribute's (only parameterless
// ones are supported).
std::vector<std::string> activations(Context& c, Cell cell, int64_t dirs) {
  std::vector<std::string> acts, perDir = defaultActivations(cell);
  for (int64_t d = 0; d < dirs; ++d)
    acts.insert(acts.end(), perDir.begin(), perDir.end());
  acts = c.attrStrings("activations", acts);
  if (acts.size() != perDir.size() * static_cast<size_t>(dirs))
    c.fail("activations needs " + std::to_string(perDir.size() * static_cast<size_t>(dirs)) +
           " entries");
  for (const std::string& a : acts)
    if (a != "Sigmoid" && a != "Tanh" && a != "Relu")
      c.fail("activation '" + a + "' is not supported yet (supported: Sigmoid, Tanh, Relu)");
  // Sigmoid, Tanh and Relu take no alpha or beta.
  c.ignoreAttr("activation_alpha");
  c.ignoreAttr("activation_beta");
  return acts;
}

// Direction d's weights from W, R and the optional B (input 3) and P (input 7, LSTM).
DirectionWeights directionWeights(Context& c, const Recurrence& r, int64_t d, int64_t dirs,
                                  const std::vector<std::string>& acts) {
  int64_t gh = gateCount(r.cell) * r.hidden;
  auto transposed = [&](Entry m) {
    return c.emit1("transpose", {sliceRows(c, m, d)}, {{"perm", std::vector<int64_t>{1, 0}}});
  };
  size_t perDir = acts.size() / static_cast<size_t>(dirs), first = perDir * static_cast<size_t>(d);
  DirectionWeights dw;
  dw.wT = transposed(c.in(1));
  dw.rT = transposed(c.in(2));
  dw.acts.assign(acts.begin() + static_cast<long>(first),
                 acts.begin() + static_cast<long>(first + perDir));
  if (c.hasInput(3)) {
    if (c.typeOf(c.in(3)).shape != Shape{dirs, 2 * gh})
      c.fail("B must be [num_directions, " + std::to_string(2 * gh) + "]");
    Entry b = sliceRows(c, c.in(3), d);
    dw.wb = sliceLast(c, b, 0, gh);
    dw.rb = sliceLast(c, b, gh, 2 * gh);
  }
  if (r.cell == Cell::GRU) {
    int64_t n = r.hidden;
    dw.rhT = sliceLast(c, dw.rT, 2 * n, 3 * n);
    dw.rT = sliceLast(c, dw.rT, 0, 2 * n);
    if (dw.rb) dw.rbh = sliceLast(c, *dw.rb, 2 * n, 3 * n), dw.rb = sliceLast(c, *dw.rb, 0, 2 * n);
  }
  if (r.cell == Cell::LSTM && c.hasInput(7)) {
    if (c.typeOf(c.in(7)).shape != Shape{dirs, 3 * r.hidden})
      c.fail("P must be [num_directions, " + std::to_string(3 * r.hidden) + "]");
    dw.peep = sliceRows(c, c.in(7), d);
  }
  return dw;
}

Entry concatOrOnly(Context& c, const std::vector<Entry>& parts, int64_t axis) {
  return parts.size() == 1 ? parts[0] : c.emit1("concat", parts, {{"axis", axis}});
}

ImportFn recurrent(Cell cell) {
  return [cell](Context& c) {
    Entry x = c.in(0);
    TensorType xt = c.typeOf(x), wt = c.typeOf(c.in(1)), rt = c.typeOf(c.in(2));
    bool batchFirst = c.attrInt("layout", 0) != 0;
    if (xt.rank() != 3 || wt.rank() != 3 || rt.rank() != 3) c.fail("X, W and R must be 3-D");
    if (batchFirst) x = c.emit1("transpose", {x}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
    Shape xs = c.typeOf(x).shape;
    Recurrence r{cell, c.attrInt("hidden_size", rt.shape[2]), xs[0], xs[1], false, std::nullopt};
    if (r.steps == 0) c.fail("empty sequences are not supported");
    int64_t g = gateCount(cell), n = r.hidden;
    std::string direction = c.attrString("direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
      c.fail("unknown direction '" + direction + "'");
    int64_t dirs = direction == "bidirectional" ? 2 : 1;
    if (wt.shape != Shape{dirs, g * n, xs[2]} || rt.shape != Shape{dirs, g * n, n})
      c.fail("W " + wt.str() + " and R " + rt.str() + " do not match " + std::to_string(dirs) +
             " direction(s), hidden_size " + std::to_string(n) + " and input " + xt.str());
    if (c.hasAttr("clip")) c.fail("clip is not supported yet");
    if (cell == Cell::LSTM && c.attrInt("input_forget", 0))
      c.fail("input_forget = 1 is not supported yet");
    if (cell == Cell::GRU) r.linearBeforeReset = c.attrInt("linear_before_reset", 0) != 0;
    std::vector<std::string> acts = activations(c, cell, dirs);
    if (c.hasInput(4)) {
      Entry lens = c.in(4);
      if (c.typeOf(lens).shape != Shape{r.batch} || !isInteger(c.typeOf(lens).dtype))
        c.fail("sequence_lens must hold one integer per batch entry");
      r.lens = c.emit1("reshape", {lens}, {{"shape", std::vector<int64_t>{r.batch, 1}}});
    }
    // Initial states [dirs, B, H] ([B, dirs, H] with layout = 1), default 0.
    auto initial = [&](size_t i) -> std::optional<Entry> {
      if (!c.hasInput(i)) return std::nullopt;
      Entry s = c.in(i);
      if (batchFirst) s = c.emit1("transpose", {s}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
      if (c.typeOf(s).shape != Shape{dirs, r.batch, n})
        c.fail("initial state " + c.typeOf(c.in(i)).str() + " has the wrong shape");
      return s;
    };
    std::optional<Entry> h0 = initial(5), c0 = cell == Cell::LSTM ? initial(6) : std::nullopt;
    Entry zeros = c.emit1("broadcast", {c.scalar(xt.dtype, 0)},
                          {{"shape", std::vector<int64_t>{r.batch, n}}});
    auto stateShape = [&](Entry v, std::vector<int64_t> shape) {
      return c.emit1("reshape", {v}, {{"shape", shape}});
    };
    std::vector<Entry> yDirs, hDirs, cDirs;
    for (int64_t d = 0; d < dirs; ++d) {
      State s0{h0 ? sliceRows(c, *h0, d) : zeros, std::nullopt};
      if (cell == Cell::LSTM) s0.cell = c0 ? sliceRows(c, *c0, d) : zeros;
      bool reverse = direction == "reverse" || d == 1;
      auto [ys, last] = runDirection(c, r, directionWeights(c, r, d, dirs, acts), x, s0, reverse);
      for (Entry& y : ys)
        y = stateShape(y, {1, 1, r.batch, n});
      yDirs.push_back(concatOrOnly(c, ys, 0));
      hDirs.push_back(stateShape(last.h, {1, r.batch, n}));
      if (last.cell) cDirs.push_back(stateShape(*last.cell, {1, r.batch, n}));
    }
    // Y [T, dirs, B, H] and Y_h, Y_c [dirs, B, H]; batch first with layout = 1.
    std::vector<Entry> out{concatOrOnly(c, yDirs, 1), concatOrOnly(c, hDirs, 0)};
    if (!cDirs.empty()) out.push_back(concatOrOnly(c, cDirs, 0));
    if (batchFirst) {
      out[0] = c.emit1("transpose", {out[0]}, {{"perm", std::vector<int64_t>{2, 0, 1, 3}}});
      for (size_t i = 1; i < out.size(); ++i)
        out[i] = c.emit1("transpose", {out[i]}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
    }
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
