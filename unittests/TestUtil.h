// Helpers for numeric op tests: build a one-op function and run it with the interpreter.
#pragma once

#include "shardc/ir/Attribute.h"
#include "shardc/ir/Tensor.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace shardc {
class Communicator;
class Function;
class Module;
} // namespace shardc

namespace shardc::testing {

// Runs op `name` on `inputs` with `attrs` through Builder + interpret(); fails the current
// test (ADD_FAILURE) and returns {} if the op rejects the inputs.
std::vector<Tensor> runOp(const std::string& name, const std::vector<Tensor>& inputs,
                          AttrDict attrs = {});
// Single-result shorthand.
Tensor run1(const std::string& name, const std::vector<Tensor>& inputs, AttrDict attrs = {});

Tensor f32(Shape shape, std::vector<double> values);
Tensor f64(Shape shape, std::vector<double> values);
Tensor i64(Shape shape, std::vector<int64_t> values);
Tensor i1(Shape shape, std::vector<int64_t> values);

// Parses text IR; reports every diagnostic as a test failure (then returns nullptr).
std::unique_ptr<Module> parseIR(const std::string& text);

// Loads SHARDC_FIXTURE_DIR/<name>.npy.
Tensor fixture(const std::string& name);

// Elementwise |a - b| <= atol + rtol * |b| with equal types; NaNs must match.
::testing::AssertionResult allClose(const Tensor& a, const Tensor& b, double rtol = 1e-6,
                                    double atol = 1e-6);

// f32 kernels against the double reference: |got - want| <= 256 ulp(f32) of the element's
// magnitude: the largest of |want|, |magnitude| (the reference on the absolute values of the
// float inputs: for a matmul sum |a||b|) and max|want| over the tensor (so results that
// cancel to near zero are judged at the scale of the values they came from), and bf16 results
// one bf16 unit in the last place more. Non-float results must be equal; NaNs and infinities
// must match.
::testing::AssertionResult nearReference(const Tensor& got, const Tensor& want,
                                         const Tensor& magnitude);

// One tensor per argument of `f`, filled with a fixed pattern of small values in [-0.5, 0.5].
std::vector<Tensor> patternArgs(const Function& f);

// The float arguments made absolute (the others as they are), for nearReference.
std::vector<Tensor> absoluteValues(const std::vector<Tensor>& args);

// Runs `f` through its executable plan (buildPlan + CompiledFunction, `threads` intra-op
// threads) on `args`: every result, tied ones included.
std::vector<Tensor> runCompiled(const Function& f, std::vector<Tensor> args,
                                Communicator* comm = nullptr, int threads = 2);

} // namespace shardc::testing
