// Helpers for numeric op tests: build a one-op function and run it with the interpreter.
#pragma once

#include "shardc/ir/Attribute.h"
#include "shardc/ir/Tensor.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace shardc {
class Module;
}

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

} // namespace shardc::testing
