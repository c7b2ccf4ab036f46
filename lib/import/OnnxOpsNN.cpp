// ONNX loss ops: SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss.
#include "OnnxContext.h"

#include <optional>

namespace shardc::onnximport {
namespace {

// Shared by the two loss ops: picks -logp[n, label[n], ...] and reduces as asked.
std::vector<Entry> nllFromLogProbs(Context& c, Entry logp, Entry labels, bool returnLogProb) {
  TensorType lt = c.typeOf(logp), yt = c.typeOf(labels);
  if (!isInteger(yt.dtype)) c.fail("labels must be integers, got " + yt.str());
  if (lt.rank() < 2 || yt.rank() != lt.rank() - 1 || yt.shape[0] != lt.shape[0])
    c.fail("scores " + lt.str() + " and labels " + yt.str() +
           " do not match ([N,C,...] and [N,...])");
  for (int64_t i = 1; i < yt.rank(); ++i)
    if (yt.shape[static_cast<size_t>(i)] != lt.shape[static_cast<size_t>(i) + 1])
      c.fail("scores " + lt.str() + " and labels " + yt.str() +
             " do not match ([N,C,...] and [N,...])");
  std::string reduction = c.attrString("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    c.fail("unknown reduction '" + reduction + "'");
  // One-hot of the labels along the class axis selects each sample's log-probability.
  Shape labelShape = yt.shape;
  labelShape.insert(labelShape.begin() + 1, 1);
  Entry y1 = c.emit1("reshape", {labels}, {{"shape", labelShape}});
  Entry classes =
      c.emit1("iota", {}, {{"shape", lt.shape}, {"axis", int64_t(1)}, {"dtype", yt.dtype}});
  // A select, not a multiply: a log-probability of -inf elsewhere must not give NaN.
  Entry onehot = c.emit1("compare", {classes, y1}, {{"direction", "eq"}});
  Entry zero = c.scalar(lt.dtype, 0);
  Entry picked = c.emit1("reduce_sum", {c.emit1("where", {onehot, logp, zero})},
                         {{"axes", std::vector<int64_t>{1}}});
  Entry loss = c.emit1("neg", {picked});
  std::vector<int64_t> all;
  for (int64_t i = 0; i < yt.rank(); ++i)
    all.push_back(i);
  // Each sample's weight: its class's weight (or 1), 0 when its label is ignore_index. The
  // mean divides by the sum of these weights.
  std::optional<Entry> keep, weight;
  if (c.hasAttr("ignore_index")) {
    // An ignored label may still pick a real class (when it lies in [0, C)): mask its loss.
    Entry ignore = c.scalar(yt.dtype, static_cast<double>(c.attrInt("ignore_index")));
    keep = c.emit1("compare", {labels, ignore}, {{"direction", "ne"}});
    // The class-weight gather must stay in range: ignored labels read class 0 instead.
    labels = c.emit1("where", {*keep, labels, c.scalar(yt.dtype, 0)});
  }
  if (c.hasInput(2)) {
    Entry w = c.in(2);
    TensorType wt = c.typeOf(w);
    if (wt.rank() != 1 || wt.shape[0] != lt.shape[1] || wt.dtype != lt.dtype)
      c.fail("class weights " + wt.str() + " must be a vector of one " +
             std::string(dtypeName(lt.dtype)) + " per class (" + std::to_string(lt.shape[1]) + ")");
    weight = c.emit1("gather", {w, labels}, {{"axis", int64_t(0)}});
  }
  if (weight) loss = c.emit1("mul", {loss, *weight});
  if (keep) {
    weight = c.emit1("where", {*keep, weight ? *weight : c.scalar(lt.dtype, 1), zero});
    loss = c.emit1("where", {*keep, loss, zero});
  }
  if (reduction != "none") {
    loss = c.emit1("reduce_sum", {loss}, {{"axes", all}});
    Entry count = weight ? c.emit1("reduce_sum", {*weight}, {{"axes", all}})
                         : c.scalar(lt.dtype, static_cast<double>(yt.numel()));
    if (reduction == "mean") loss = c.emit1("div", {loss, count});
  }
  std::vector<Entry> out{loss};
  if (returnLogProb) out.push_back(logp);
  return out;
}

std::vector<Entry> softmaxCrossEntropy(Context& c) {
  Entry scores = c.in(0);
  Entry logp = c.emit1("log_softmax", {scores}, {{"axis", int64_t(1)}});
  return nllFromLogProbs(c, logp, c.in(1), true);
}

std::vector<Entry> negativeLogLikelihood(Context& c) {
  return nllFromLogProbs(c, c.in(0), c.in(1), false);
}

} // namespace

void registerNNImports(OpTable& t) {
  t["SoftmaxCrossEntropyLoss"] = softmaxCrossEntropy;
  t["NegativeLogLikelihoodLoss"] = negativeLogLikelihood;
}

} // namespace shardc::onnximport
