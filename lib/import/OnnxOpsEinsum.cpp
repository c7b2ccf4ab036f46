// ONNX Einsum with one or two operands, lowered to reduce_sum, transpose, reshape and one
// batched matmul. Repeated labels in one operand (diagonals) are summed out under an
// equality mask; ellipses broadcast numpy-style.
#include "OnnxContext.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace shardc::onnximport {
namespace {

// A label is a letter, or kEllipsis + i for the i-th of the broadcast dims (right-aligned).
using Labels = std::vector<int>;
constexpr int kEllipsis = 256;

// Parses one term ("ij", "...ij"); `rank` (>= 0) expands the ellipsis to rank - letters
// labels, right-aligned among `ellipsisRank` broadcast dims.
Labels parseTerm(Context& c, const std::string& term, int64_t rank, int64_t ellipsisRank) {
  Labels labels;
  size_t dots = term.find("...");
  if (dots != std::string::npos && term.find("...", dots + 3) != std::string::npos)
    c.fail("a term has two ellipses: '" + term + "'");
  int64_t letters = static_cast<int64_t>(term.size()) - (dots == std::string::npos ? 0 : 3);
  for (size_t i = 0; i < term.size(); ++i) {
    if (i == dots) {
      int64_t n = rank >= 0 ? rank - letters : ellipsisRank;
      if (n < 0) c.fail("term '" + term + "' has more labels than its operand has dims");
      for (int64_t k = ellipsisRank - n; k < ellipsisRank; ++k)
        labels.push_back(kEllipsis + static_cast<int>(k));
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(term[i]))) {
      labels.push_back(term[i]);
    } else {
      c.fail("unexpected character '" + std::string(1, term[i]) + "' in the equation");
    }
  }
  if (rank >= 0 && static_cast<int64_t>(labels.size()) != rank)
    c.fail("term '" + term + "' has " + std::to_string(labels.size()) +
           " labels for an operand of rank " + std::to_string(rank));
  return labels;
}

struct Operand {
  Entry value;
  Labels labels;
};

std::vector<int64_t> positionsOf(const Labels& ls, int label) {
  std::vector<int64_t> p;
  for (size_t i = 0; i < ls.size(); ++i)
    if (ls[i] == label) p.push_back(static_cast<int64_t>(i));
  return p;
}

// Keeps the diagonal of a label repeated within the operand: masks off-diagonal elements
// and sums out the repeats.
void takeDiagonals(Context& c, Operand& op) {
  for (size_t i = 0; i < op.labels.size(); ++i) {
    std::vector<int64_t> at = positionsOf(op.labels, op.labels[i]);
    if (at.size() < 2) continue;
    Shape s = c.typeOf(op.value).shape;
    Entry first = c.emit1("iota", {}, {{"shape", s}, {"axis", at[0]}});
    Entry zero = c.scalar(c.typeOf(op.value).dtype, 0);
    for (size_t k = 1; k < at.size(); ++k) {
      if (s[static_cast<size_t>(at[k])] != s[static_cast<size_t>(at[0])])
        c.fail("a repeated label has dims of different sizes");
      Entry other = c.emit1("iota", {}, {{"shape", s}, {"axis", at[k]}});
      Entry same = c.emit1("compare", {first, other}, {{"direction", "eq"}});
      op.value = c.emit1("where", {same, op.value, zero});
    }
    std::vector<int64_t> repeats(at.begin() + 1, at.end());
    op.value = c.emit1("reduce_sum", {op.value}, {{"axes", repeats}});
    for (auto it = repeats.rbegin(); it != repeats.rend(); ++it)
      op.labels.erase(op.labels.begin() + *it);
  }
}

// Sums out the labels no other operand and not the output uses.
void sumPrivateLabels(Context& c, Operand& op, const Labels& others, const Labels& out) {
  std::vector<int64_t> axes;
  Labels kept;
  for (size_t i = 0; i < op.labels.size(); ++i) {
    int l = op.labels[i];
    bool used =
        std::count(others.begin(), others.end(), l) || std::count(out.begin(), out.end(), l);
    if (used)
      kept.push_back(l);
    else
      axes.push_back(static_cast<int64_t>(i));
  }
  if (axes.empty()) return;
  op.value = c.emit1("reduce_sum", {op.value}, {{"axes", axes}});
  op.labels = kept;
}

// Transposes the operand to the label order `order` (a permutation of its labels).
Entry permuteTo(Context& c, const Operand& op, const Labels& order) {
  std::vector<int64_t> perm;
  for (int l : order)
    perm.push_back(positionsOf(op.labels, l)[0]);
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity &= perm[i] == static_cast<int64_t>(i);
  return identity ? op.value : c.emit1("transpose", {op.value}, {{"perm", perm}});
}

int64_t sizeOf(Context& c, const Operand& op, int label) {
  return c.typeOf(op.value).shape[static_cast<size_t>(positionsOf(op.labels, label)[0])];
}

// Two operands: batch labels (in both and the output), contracted ones (in both, not the
// output), and labels of only one side, as one [B, M, K] x [B, K, N] matmul ([M, K] x [K, N]
// without batch labels).
Entry contractPair(Context& c, Operand a, Operand b, const Labels& out) {
  // A broadcast (size-1) dim of a shared label is expanded to the other side's size first.
  for (int l : Labels(a.labels)) {
    if (!std::count(b.labels.begin(), b.labels.end(), l)) continue;
    int64_t na = sizeOf(c, a, l), nb = sizeOf(c, b, l);
    if (na == nb) continue;
    if (na != 1 && nb != 1)
      c.fail("label dims of sizes " + std::to_string(na) + " and " + std::to_string(nb) +
             " do not broadcast");
    Operand& small = na == 1 ? a : b;
    Shape s = c.typeOf(small.value).shape;
    s[static_cast<size_t>(positionsOf(small.labels, l)[0])] = std::max(na, nb);
    small.value = c.emit1("broadcast", {small.value}, {{"shape", s}});
  }
  Labels batch, contracted, left, right;
  for (int l : a.labels) {
    bool inB = std::count(b.labels.begin(), b.labels.end(), l),
         inOut = std::count(out.begin(), out.end(), l);
    (inB ? (inOut ? batch : contracted) : left).push_back(l);
  }
  for (int l : b.labels)
    if (!std::count(a.labels.begin(), a.labels.end(), l)) right.push_back(l);
  auto product = [&](const Operand& op, const Labels& ls) {
    int64_t n = 1;
    for (int l : ls)
      n *= sizeOf(c, op, l);
    return n;
  };
  int64_t nb = product(a, batch), m = product(a, left), k = product(a, contracted),
          n = product(b, right);
  Labels aOrder = batch, bOrder = batch;
  aOrder.insert(aOrder.end(), left.begin(), left.end());
  aOrder.insert(aOrder.end(), contracted.begin(), contracted.end());
  bOrder.insert(bOrder.end(), contracted.begin(), contracted.end());
  bOrder.insert(bOrder.end(), right.begin(), right.end());
  // Without batch labels, a plain 2-D matmul.
  auto matrix = [&](int64_t rows, int64_t cols) {
    return batch.empty() ? std::vector<int64_t>{rows, cols} : std::vector<int64_t>{nb, rows, cols};
  };
  Entry am = c.emit1("reshape", {permuteTo(c, a, aOrder)}, {{"shape", matrix(m, k)}});
  Entry bm = c.emit1("reshape", {permuteTo(c, b, bOrder)}, {{"shape", matrix(k, n)}});
  Operand r{c.emit1("matmul", {am, bm}), batch};
  r.labels.insert(r.labels.end(), left.begin(), left.end());
  r.labels.insert(r.labels.end(), right.begin(), right.end());
  Shape rs;
  for (int l : batch)
    rs.push_back(sizeOf(c, a, l));
  for (int l : left)
    rs.push_back(sizeOf(c, a, l));
  for (int l : right)
    rs.push_back(sizeOf(c, b, l));
  r.value = c.emit1("reshape", {r.value}, {{"shape", rs}});
  return permuteTo(c, r, out);
}

std::vector<Entry> einsum(Context& c) {
  std::string eq;
  for (char ch : c.attrString("equation"))
    if (!std::isspace(static_cast<unsigned char>(ch))) eq += ch;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != c.numInputs())
    c.fail("the equation has " + std::to_string(terms.size()) + " operand terms for " +
           std::to_string(c.numInputs()) + " inputs");
  if (terms.size() > 2) c.fail("Einsum with more than two operands is not supported yet");
  std::vector<Operand> ops;
  int64_t ellipsisRank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    int64_t rank = c.typeOf(c.in(i)).rank(), letters = 0;
    for (char ch : terms[i])
      letters += std::isalpha(static_cast<unsigned char>(ch)) ? 1 : 0;
    if (terms[i].find("...") != std::string::npos)
      ellipsisRank = std::max(ellipsisRank, rank - letters);
  }
  for (size_t i = 0; i < terms.size(); ++i)
    ops.push_back(Operand{c.in(i), parseTerm(c, terms[i], c.typeOf(c.in(i)).rank(), ellipsisRank)});
  Labels out;
  if (arrow != std::string::npos) {
    out = parseTerm(c, eq.substr(arrow + 2), -1, ellipsisRank);
    for (int l : out)
      if (std::count(out.begin(), out.end(), l) > 1) c.fail("the output repeats a label");
  } else {
    // Implicit output: the broadcast dims, then the letters used once, in alphabetical order.
    std::map<int, int> uses;
    for (const Operand& op : ops)
      for (int l : op.labels)
        ++uses[l];
    for (auto [l, n] : uses)
      if (l >= kEllipsis || n == 1) out.push_back(l);
    std::stable_partition(out.begin(), out.end(), [](int l) { return l >= kEllipsis; });
  }
  for (int l : out) {
    bool found = false;
    for (const Operand& op : ops)
      found |= std::count(op.labels.begin(), op.labels.end(), l) > 0;
    if (!found) c.fail("output label is not in any operand");
  }
  for (Operand& op : ops)
    takeDiagonals(c, op);
  if (ops.size() == 1) {
    sumPrivateLabels(c, ops[0], {}, out);
    return {permuteTo(c, ops[0], out)};
  }
  sumPrivateLabels(c, ops[0], ops[1].labels, out);
  sumPrivateLabels(c, ops[1], ops[0].labels, out);
  return {contractPair(c, ops[0], ops[1], out)};
}

} // namespace

void registerEinsumImports(OpTable& t) {
  t["Einsum"] = einsum;
}

} // namespace shardc::onnximport
