#include "TestUtil.h"

#include "shardc/exec/CompiledFunction.h"

#include "shardc/exec/Interpreter.h"
#include "shardc/io/Npy.h"
#include "shardc/io/TensorFormat.h"
#include "shardc/ir/Builder.h"
#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Parser.h"

#include <cmath>

namespace shardc::testing {

std::vector<Tensor> runOp(const std::string& name, const std::vector<Tensor>& inputs,
                          AttrDict attrs) {
  Function f("test");
  std::vector<Value*> args;
  for (size_t i = 0; i < inputs.size(); ++i)
    args.push_back(f.addArgument("a" + std::to_string(i), inputs[i].type(), ArgKind::Input));
  Builder b(f);
  std::string err;
  Op* op = b.tryCreate(name, args, std::move(attrs), err);
  if (!op) {
    ADD_FAILURE() << "op rejected its inputs: " << err;
    return {};
  }
  for (size_t i = 0; i < op->numResults(); ++i)
    f.addResult("r" + std::to_string(i), op->result(i));
  return interpret(f, inputs);
}

Tensor run1(const std::string& name, const std::vector<Tensor>& inputs, AttrDict attrs) {
  auto r = runOp(name, inputs, std::move(attrs));
  return r.empty() ? Tensor() : r[0];
}

Tensor f32(Shape shape, std::vector<double> values) {
  return Tensor::fromDoubles(TensorType{DType::F32, std::move(shape)}, values);
}
Tensor f64(Shape shape, std::vector<double> values) {
  return Tensor::fromDoubles(TensorType{DType::F64, std::move(shape)}, values);
}
Tensor i64(Shape shape, std::vector<int64_t> values) {
  return Tensor::fromInts(TensorType{DType::I64, std::move(shape)}, values);
}
Tensor i1(Shape shape, std::vector<int64_t> values) {
  return Tensor::fromInts(TensorType{DType::I1, std::move(shape)}, values);
}

std::unique_ptr<Module> parseIR(const std::string& text) {
  DiagEngine diags("<test>");
  std::unique_ptr<Module> m = parseModule(text, diags);
  for (const Diagnostic& d : diags.diagnostics())
    ADD_FAILURE() << diags.format(d);
  return diags.hasErrors() ? nullptr : std::move(m);
}

Tensor fixture(const std::string& name) {
  return readNpy(std::string(SHARDC_FIXTURE_DIR) + "/" + name + ".npy");
}

::testing::AssertionResult allClose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  if (a.type() != b.type())
    return ::testing::AssertionFailure()
           << "types differ: " << a.type().str() << " vs " << b.type().str();
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.getDouble(i), y = b.getDouble(i);
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y))
        return ::testing::AssertionFailure() << "element " << i << ": " << x << " vs " << y;
      continue;
    }
    if (x == y) continue; // covers equal infinities
    if (!(std::fabs(x - y) <= atol + rtol * std::fabs(y)))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << x << " vs " << y
             << "\n  got:      " << formatTensor(a, 16) << "\n  expected: " << formatTensor(b, 16);
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult nearReference(const Tensor& got, const Tensor& want,
                                         const Tensor& magnitude) {
  if (got.type() != want.type())
    return ::testing::AssertionFailure()
           << "types differ: " << got.type().str() << " vs " << want.type().str();
  if (!isFloat(want.dtype())) return allClose(got, want, 0, 0);
  constexpr double kUlps = 256.0 / (1 << 24);
  double scale = 0;
  for (int64_t i = 0; i < want.numel(); ++i)
    if (std::isfinite(want.getDouble(i))) scale = std::max(scale, std::fabs(want.getDouble(i)));
  for (int64_t i = 0; i < want.numel(); ++i) {
    double x = got.getDouble(i), y = want.getDouble(i);
    if (std::isnan(x) || std::isnan(y) || std::isinf(y)) {
      if (std::isnan(x) != std::isnan(y) || (std::isinf(y) && x != y))
        return ::testing::AssertionFailure() << "element " << i << ": " << x << " vs " << y;
      continue;
    }
    double m = std::max({std::fabs(y), std::fabs(magnitude.getDouble(i)), scale});
    // A bf16 result rounds once: a sum in another order may round to the next bf16 (one unit
    // in the last place is at most 2^-7 of the value).
    double bound = kUlps * m + (want.dtype() == DType::BF16 ? std::ldexp(std::fabs(y), -7) : 0.0);
    if (!(std::fabs(x - y) <= bound))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << x << " vs " << y << " (bound " << bound << ")"
             << "\n  got:      " << formatTensor(got, 16)
             << "\n  expected: " << formatTensor(want, 16);
  }
  return ::testing::AssertionSuccess();
}

std::vector<Tensor> absoluteValues(const std::vector<Tensor>& args) {
  std::vector<Tensor> out = args;
  for (Tensor& t : out)
    if (isFloat(t.dtype()))
      for (int64_t i = 0; i < t.numel(); ++i)
        t.setDouble(i, std::fabs(t.getDouble(i)));
  return out;
}

std::vector<Tensor> patternArgs(const Function& f) {
  std::vector<Tensor> args;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    Tensor t(f.argument(i)->type());
    for (int64_t k = 0; k < t.numel(); ++k)
      t.setDouble(k, 0.1 * static_cast<double>((k * 7 + static_cast<int64_t>(i) * 3) % 11) - 0.5);
    args.push_back(std::move(t));
  }
  return args;
}

std::vector<Tensor> runCompiled(const Function& f, std::vector<Tensor> args, Communicator* comm,
                                int threads) {
  CompiledFunction cf(f, buildPlan(f), threads);
  std::vector<Tensor> untied = cf.run(args, comm);
  std::vector<Tensor> out;
  size_t k = 0;
  for (const auto& r : f.results())
    out.push_back(r.tiedArg >= 0 ? args[static_cast<size_t>(r.tiedArg)] : std::move(untied[k++]));
  return out;
}

} // namespace shardc::testing
