// Numeric tests of the elementwise ops: unary math, binary arithmetic with broadcasting,
// compare, where, cast. Expected values are worked by hand or come from PyTorch fixtures.
#include "OpTestUtil.h"

#include <cstdint>

using namespace shardc;
using namespace shardc::testing;

namespace {

constexpr int64_t kI64Min = INT64_MIN, kI64Max = INT64_MAX;
constexpr int64_t kI32Min = INT32_MIN, kI32Max = INT32_MAX;

// ---- unary ----

TEST(ElementwiseOpTest, NegAbsReluFloat) {
  Tensor x = f32({5}, {-2, -0.5, 0, 3, kNaN});
  EXPECT_TRUE(same(run1("neg", {x}), f32({5}, {2, 0.5, 0, -3, kNaN})));
  EXPECT_TRUE(same(run1("abs", {x}), f32({5}, {2, 0.5, 0, 3, kNaN})));
  // relu(NaN) is NaN, as in PyTorch and np.maximum(x, 0).
  EXPECT_TRUE(same(run1("relu", {x}), f32({5}, {0, 0, 0, 3, kNaN})));
}

TEST(ElementwiseOpTest, NegAbsReluIntegers) {
  // Two's-complement wraparound at the minimum, as numpy and PyTorch.
  Tensor x = i64({4}, {-5, 0, 7, kI64Min});
  EXPECT_TRUE(same(run1("neg", {x}), i64({4}, {5, 0, -7, kI64Min})));
  EXPECT_TRUE(same(run1("abs", {x}), i64({4}, {5, 0, 7, kI64Min})));
  EXPECT_TRUE(same(run1("relu", {x}), i64({4}, {0, 0, 7, 0})));
  Tensor y = i32({4}, {-5, 0, 7, kI32Min});
  EXPECT_TRUE(same(run1("neg", {y}), i32({4}, {5, 0, -7, kI32Min})));
  EXPECT_TRUE(same(run1("abs", {y}), i32({4}, {5, 0, 7, kI32Min})));
  EXPECT_TRUE(same(run1("relu", {y}), i32({4}, {0, 0, 7, 0})));
}

TEST(ElementwiseOpTest, ExpLogSqrtRsqrtReciprocal) {
  EXPECT_TRUE(allClose(run1("exp", {f64({4}, {0, 1, -kInf, kInf})}),
                       f64({4}, {1, 2.718281828459045, 0, kInf}), 1e-15, 0));
  EXPECT_TRUE(same(run1("log", {f64({5}, {1, 0, -1, kInf, 8})}),
                   f64({5}, {0, -kInf, kNaN, kInf, std::log(8.0)})));
  EXPECT_TRUE(same(run1("sqrt", {f32({4}, {4, 0, -1, 2.25})}), f32({4}, {2, 0, kNaN, 1.5})));
  EXPECT_TRUE(same(run1("rsqrt", {f32({4}, {4, 0, 0.25, -1})}), f32({4}, {0.5, kInf, 2, kNaN})));
  EXPECT_TRUE(
      same(run1("reciprocal", {f32({4}, {-4, 0, 0.5, kInf})}), f32({4}, {-0.25, kInf, 2, 0})));
}

TEST(ElementwiseOpTest, TanhErfSigmoidFloor) {
  EXPECT_TRUE(allClose(run1("tanh", {f64({4}, {0, 0.5, kInf, -kInf})}),
                       f64({4}, {0, 0.46211715726000974, 1, -1}), 1e-15, 0));
  EXPECT_TRUE(allClose(run1("erf", {f64({4}, {0, 0.5, -0.5, kInf})}),
                       f64({4}, {0, 0.5204998778130465, -0.5204998778130465, 1}), 1e-15, 0));
  EXPECT_TRUE(allClose(run1("sigmoid", {f64({4}, {0, 1, -kInf, kInf})}),
                       f64({4}, {0.5, 0.7310585786300049, 0, 1}), 1e-15, 0));
  EXPECT_TRUE(
      same(run1("floor", {f32({5}, {-1.5, 2.7, -2, 0.25, kNaN})}), f32({5}, {-2, 2, -2, 0, kNaN})));
  EXPECT_TRUE(
      same(run1("ceil", {f32({5}, {-1.5, 2.7, -2, 0.25, kNaN})}), f32({5}, {-1, 3, -2, 1, kNaN})));
}

TEST(ElementwiseOpTest, UnaryMathMatchesTorch) {
  // Fixture references are float32 PyTorch/numpy results; both sides are rounded
  // transcendental functions, so allow a few float32 ulps.
  Tensor x = fixture("unary_x");
  for (const char* op : {"erf", "tanh", "sigmoid", "exp"})
    EXPECT_TRUE(allClose(run1(op, {x}), fixture(std::string(op) + "_out"), 1e-5, 1e-6)) << op;
  Tensor pos = fixture("unary_pos_x");
  for (const char* op : {"log", "rsqrt"})
    EXPECT_TRUE(allClose(run1(op, {pos}), fixture(std::string(op) + "_out"), 1e-5, 1e-6)) << op;
}

TEST(ElementwiseOpTest, UnaryRoundsToHalfTypes) {
  // e = 2.71828...: nearest f16 (ulp 2^-9 in [2,4)) and nearest bf16 (ulp 2^-6) are 2.71875.
  EXPECT_TRUE(
      same(run1("exp", {typed(DType::F16, {2}, {1, 0})}), typed(DType::F16, {2}, {2.71875, 1})));
  EXPECT_TRUE(
      same(run1("exp", {typed(DType::BF16, {2}, {1, 0})}), typed(DType::BF16, {2}, {2.71875, 1})));
  // sqrt(2) = 1.41421...: f16 1.4140625 (ulp 2^-10), bf16 1.4140625 (ulp 2^-7).
  EXPECT_TRUE(
      same(run1("sqrt", {typed(DType::F16, {1}, {2})}), typed(DType::F16, {1}, {1.4140625})));
  EXPECT_TRUE(
      same(run1("sqrt", {typed(DType::BF16, {1}, {2})}), typed(DType::BF16, {1}, {1.4140625})));
}

TEST(ElementwiseOpTest, Not) {
  EXPECT_TRUE(same(run1("not", {i1({3}, {1, 0, 1})}), i1({3}, {0, 1, 0})));
}

TEST(ElementwiseOpTest, UnaryDomains) {
  EXPECT_NE(shapeError("exp", {{DType::I64, {2}}}), "");
  EXPECT_NE(shapeError("floor", {{DType::I32, {2}}}), "");
  EXPECT_NE(shapeError("neg", {{DType::I1, {2}}}), "");
  EXPECT_NE(shapeError("not", {{DType::F32, {2}}}), "");
  EXPECT_EQ(shapeError("abs", {{DType::I32, {2}}}), "");
}

TEST(ElementwiseOpTest, GeluBothForms) {
  // erf form: x * Phi(x); tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
  Tensor x = f64({4}, {0, 1, -1, 2});
  EXPECT_TRUE(allClose(run1("gelu", {x}),
                       f64({4}, {0, 0.8413447460685429, -0.15865525393145707, 1.9544997361036416}),
                       1e-14, 0));
  EXPECT_TRUE(allClose(run1("gelu", {x}, {{"approximate", "tanh"}}),
                       f64({4}, {0, 0.8411919906082768, -0.15880800939172324, 1.954597694087775}),
                       1e-14, 0));
  EXPECT_NE(shapeError("gelu", {{DType::F32, {2}}}, {{"approximate", "fast"}}), "");
}

TEST(ElementwiseOpTest, GeluMatchesTorch) {
  Tensor x = fixture("unary_x");
  EXPECT_TRUE(allClose(run1("gelu", {x}), fixture("gelu_out"), 1e-5, 1e-6));
  EXPECT_TRUE(
      allClose(run1("gelu", {x}, {{"approximate", "tanh"}}), fixture("gelu_tanh_out"), 1e-5, 1e-6));
}

// dy * gelu'(x), against PyTorch's autograd (float64); the saturated ends give 1 and 0.
TEST(ElementwiseOpTest, GeluGradMatchesTorchAutograd) {
  Tensor x = f64({8}, {0, 1, -1, 2, -3, 0.5, 6, -6}), dy = f64({8}, {1, 2, -1, 0.5, 1, 3, 1, 1});
  EXPECT_TRUE(allClose(run1("gelu_grad", {x, dy}),
                       f64({8}, {0.5, 2.166630941175373, 0.08331547058768635, 0.5426159005390985,
                                 -0.01194564720418392, 2.602485373968489, 1.0000000354687093,
                                 -3.546870945402639e-08}),
                       1e-14, 1e-16));
  EXPECT_TRUE(allClose(run1("gelu_grad", {x, dy}, {{"approximate", "tanh"}}),
                       f64({8}, {0.5, 2.165928167691565, 0.08296408384578258, 0.5430496283118091,
                                 -0.011584166630969648, 2.6021097106039273, 1.0000000007709977,
                                 -7.709976012836329e-10}),
                       1e-14, 1e-16));
  Tensor ends = f64({2}, {kInf, -kInf}), ones = f64({2}, {1, 1});
  EXPECT_TRUE(same(run1("gelu_grad", {ends, ones}, {{"approximate", "tanh"}}), f64({2}, {1, 0})));
  EXPECT_NE(shapeError("gelu_grad", {{DType::F32, {2}}, {DType::F32, {3}}}), "");
  EXPECT_NE(shapeError("gelu_grad", {{DType::I32, {2}}, {DType::I32, {2}}}), "");
  EXPECT_NE(shapeError("gelu_grad", {{DType::F32, {2}}, {DType::F32, {2}}}, {{"approximate", "x"}}),
            "");
}

// ---- binary ----

TEST(ElementwiseOpTest, AddSubMulDivFloat) {
  Tensor a = f32({4}, {1, -2, 0.5, 0}), b = f32({4}, {4, 8, -0.25, 0});
  EXPECT_TRUE(same(run1("add", {a, b}), f32({4}, {5, 6, 0.25, 0})));
  EXPECT_TRUE(same(run1("sub", {a, b}), f32({4}, {-3, -10, 0.75, 0})));
  EXPECT_TRUE(same(run1("mul", {a, b}), f32({4}, {4, -16, -0.125, 0})));
  // Float division by zero follows IEEE: 0/0 is NaN.
  EXPECT_TRUE(same(run1("div", {a, b}), f32({4}, {0.25, -0.25, -2, kNaN})));
  EXPECT_TRUE(same(run1("div", {f32({2}, {1, -1}), f32({2}, {0, 0})}), f32({2}, {kInf, -kInf})));
}

TEST(ElementwiseOpTest, NumpyBroadcasting) {
  // [2,1] op [3] -> [2,3]; a scalar [] against [2,3]; [2,3,1] against [1,2]... -> [2,3,2].
  Tensor col = f32({2, 1}, {10, 20}), row = f32({3}, {1, 2, 3});
  EXPECT_TRUE(same(run1("add", {col, row}), f32({2, 3}, {11, 12, 13, 21, 22, 23})));
  EXPECT_TRUE(same(run1("sub", {row, col}), f32({2, 3}, {-9, -8, -7, -19, -18, -17})));
  EXPECT_TRUE(same(run1("mul", {f32({}, {2}), f32({2, 3}, {1, 2, 3, 4, 5, 6})}),
                   f32({2, 3}, {2, 4, 6, 8, 10, 12})));
  Tensor a = i64({2, 3, 1}, {0, 1, 2, 3, 4, 5}), b = i64({1, 2}, {10, 100});
  EXPECT_TRUE(same(run1("add", {a, b}),
                   i64({2, 3, 2}, {10, 100, 11, 101, 12, 102, 13, 103, 14, 104, 15, 105})));
  EXPECT_NE(shapeError("add", {{DType::F32, {2, 3}}, {DType::F32, {2}}}), "");
  EXPECT_NE(shapeError("add", {{DType::F32, {2}}, {DType::I64, {2}}}), "");
}

TEST(ElementwiseOpTest, IntegerArithmetic) {
  Tensor a = i64({4}, {7, -7, 7, -7}), b = i64({4}, {2, 2, -2, -2});
  EXPECT_TRUE(same(run1("add", {a, b}), i64({4}, {9, -5, 5, -9})));
  EXPECT_TRUE(same(run1("sub", {a, b}), i64({4}, {5, -9, 9, -5})));
  EXPECT_TRUE(same(run1("mul", {a, b}), i64({4}, {14, -14, -14, 14})));
  // Integer division truncates toward zero (C, PyTorch's trunc mode), not floor.
  EXPECT_TRUE(same(run1("div", {a, b}), i64({4}, {3, -3, -3, 3})));
  EXPECT_TRUE(same(run1("div", {i32({4}, {7, -7, 1, -1}), i32({4}, {2, 2, -3, 3})}),
                   i32({4}, {3, -3, 0, 0})));
  // Overflow wraps around in the operand width.
  EXPECT_TRUE(same(run1("add", {i32({2}, {kI32Max, kI32Min}), i32({2}, {1, -1})}),
                   i32({2}, {kI32Min, kI32Max})));
  EXPECT_TRUE(same(run1("add", {i64({1}, {kI64Max}), i64({1}, {1})}), i64({1}, {kI64Min})));
  EXPECT_TRUE(same(run1("div", {i64({1}, {kI64Min}), i64({1}, {-1})}), i64({1}, {kI64Min})));
}

TEST(ElementwiseOpTest, IntegerDivisionByZeroIsAnError) {
  std::string err = kernelError("div", {i64({2}, {1, 2}), i64({2}, {1, 0})});
  EXPECT_NE(err.find("'div' op"), std::string::npos) << err;
  EXPECT_NE(err.find("division by zero"), std::string::npos) << err;
}

TEST(ElementwiseOpTest, Pow) {
  EXPECT_TRUE(same(run1("pow", {f32({5}, {2, 4, -8, 0, -2}), f32({5}, {3, 0.5, 1.0 / 3, 0, 2})}),
                   f32({5}, {8, 2, kNaN, 1, 4})));
  EXPECT_NE(shapeError("pow", {{DType::I64, {2}}, {DType::I64, {2}}}), "");
}

TEST(ElementwiseOpTest, MaxMinPropagateNaN) {
  Tensor a = f32({4}, {1, kNaN, 3, -kInf}), b = f32({4}, {2, 2, kNaN, -1});
  EXPECT_TRUE(same(run1("max", {a, b}), f32({4}, {2, kNaN, kNaN, -1})));
  EXPECT_TRUE(same(run1("min", {a, b}), f32({4}, {1, kNaN, kNaN, -kInf})));
}

TEST(ElementwiseOpTest, MaxMinIntegersBroadcast) {
  Tensor a = i64({2, 2}, {-3, 5, 7, kI64Min}), b = i64({2}, {0, 6});
  EXPECT_TRUE(same(run1("max", {a, b}), i64({2, 2}, {0, 6, 7, 6})));
  EXPECT_TRUE(same(run1("min", {a, b}), i64({2, 2}, {-3, 5, 0, kI64Min})));
  EXPECT_TRUE(same(run1("max", {i32({3}, {-1, 4, kI32Min}), i32({1}, {2})}), i32({3}, {2, 4, 2})));
  EXPECT_TRUE(same(run1("min", {i32({3}, {-1, 4, kI32Max}), i32({1}, {2})}), i32({3}, {-1, 2, 2})));
}

TEST(ElementwiseOpTest, HalfTypesRoundToNearestEven) {
  // f16 has 10 mantissa bits: 1 + 2^-11 is halfway between 1 and 1 + 2^-10 and rounds to
  // the even 1; (1 + 2^-10) + 2^-11 rounds up to the even 1 + 2^-9.
  Tensor h = run1("add", {typed(DType::F16, {2}, {1, 1 + 0x1p-10}),
                          typed(DType::F16, {2}, {0x1p-11, 0x1p-11})});
  EXPECT_TRUE(same(h, typed(DType::F16, {2}, {1, 1 + 0x1p-9})));
  // Beyond 65504 the f16 result overflows to infinity.
  EXPECT_TRUE(same(run1("add", {typed(DType::F16, {1}, {60000}), typed(DType::F16, {1}, {10000})}),
                   typed(DType::F16, {1}, {kInf})));
  // bf16 has 7 mantissa bits: the same ties one binade lower.
  Tensor bf = run1(
      "add", {typed(DType::BF16, {2}, {1, 1 + 0x1p-7}), typed(DType::BF16, {2}, {0x1p-8, 0x1p-8})});
  EXPECT_TRUE(same(bf, typed(DType::BF16, {2}, {1, 1 + 0x1p-6})));
  // 1/3 in f16 is 0x3555 = 0.333251953125.
  EXPECT_TRUE(same(run1("div", {typed(DType::F16, {1}, {1}), typed(DType::F16, {1}, {3})}),
                   typed(DType::F16, {1}, {0.333251953125})));
}

TEST(ElementwiseOpTest, AndOr) {
  Tensor a = i1({2, 2}, {0, 0, 1, 1}), b = i1({2}, {0, 1});
  EXPECT_TRUE(same(run1("and", {a, b}), i1({2, 2}, {0, 0, 0, 1})));
  EXPECT_TRUE(same(run1("or", {a, b}), i1({2, 2}, {0, 1, 1, 1})));
  EXPECT_NE(shapeError("and", {{DType::I64, {2}}, {DType::I64, {2}}}), "");
}

// ---- compare, where ----

TEST(ElementwiseOpTest, CompareAllDirectionsBroadcast) {
  Tensor a = f32({3, 1}, {1, 2, 3}), b = f32({3}, {1, 2, 3});
  auto cmp = [&](const char* dir) { return run1("compare", {a, b}, {{"direction", dir}}); };
  EXPECT_TRUE(same(cmp("eq"), i1({3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1})));
  EXPECT_TRUE(same(cmp("ne"), i1({3, 3}, {0, 1, 1, 1, 0, 1, 1, 1, 0})));
  EXPECT_TRUE(same(cmp("lt"), i1({3, 3}, {0, 1, 1, 0, 0, 1, 0, 0, 0})));
  EXPECT_TRUE(same(cmp("le"), i1({3, 3}, {1, 1, 1, 0, 1, 1, 0, 0, 1})));
  EXPECT_TRUE(same(cmp("gt"), i1({3, 3}, {0, 0, 0, 1, 0, 0, 1, 1, 0})));
  EXPECT_TRUE(same(cmp("ge"), i1({3, 3}, {1, 0, 0, 1, 1, 0, 1, 1, 1})));
  EXPECT_NE(shapeError("compare", {{DType::F32, {2}}, {DType::F32, {2}}}, {{"direction", "gte"}}),
            "");
}

TEST(ElementwiseOpTest, CompareNaNAndIntegers) {
  // Every ordered comparison with NaN is false; only ne is true.
  Tensor n = f32({1}, {kNaN}), one = f32({1}, {1});
  for (const char* dir : {"eq", "lt", "le", "gt", "ge"})
    EXPECT_TRUE(same(run1("compare", {n, one}, {{"direction", dir}}), i1({1}, {0}))) << dir;
  EXPECT_TRUE(same(run1("compare", {n, n}, {{"direction", "ne"}}), i1({1}, {1})));
  // Integers compare exactly, even where doubles could not tell them apart.
  EXPECT_TRUE(same(
      run1("compare", {i64({2}, {kI64Max, -1}), i64({2}, {kI64Max - 1, 0})}, {{"direction", "gt"}}),
      i1({2}, {1, 0})));
}

TEST(ElementwiseOpTest, WhereBroadcastsAllThree) {
  // cond [2,1], a [3], b [] -> [2,3].
  Tensor c = i1({2, 1}, {1, 0}), a = f32({3}, {1, 2, 3}), b = f32({}, {-1});
  EXPECT_TRUE(same(run1("where", {c, a, b}), f32({2, 3}, {1, 2, 3, -1, -1, -1})));
  Tensor c2 = i1({3}, {0, 1, 0});
  EXPECT_TRUE(same(run1("where", {c2, i64({2, 1}, {7, 8}), i64({3}, {-1, -2, -3})}),
                   i64({2, 3}, {-1, 7, -3, -1, 8, -3})));
  // Copies raw elements, so f16 values and NaNs pass through unchanged.
  EXPECT_TRUE(same(run1("where", {i1({2}, {1, 0}), typed(DType::F16, {2}, {kNaN, 1}),
                                  typed(DType::F16, {2}, {0, 0.5})}),
                   typed(DType::F16, {2}, {kNaN, 0.5})));
  EXPECT_NE(shapeError("where", {{DType::F32, {2}}, {DType::F32, {2}}, {DType::F32, {2}}}), "");
}

// ---- cast ----

TEST(ElementwiseOpTest, CastFloatToIntTruncatesTowardZero) {
  Tensor x = f32({6}, {-2.7, -0.5, 0.5, 2.7, 3, -3});
  EXPECT_TRUE(same(run1("cast", {x}, {{"to", DType::I64}}), i64({6}, {-2, 0, 0, 2, 3, -3})));
  EXPECT_TRUE(same(run1("cast", {x}, {{"to", DType::I32}}), i32({6}, {-2, 0, 0, 2, 3, -3})));
  EXPECT_TRUE(same(run1("cast", {typed(DType::BF16, {2}, {-1.5, 2.5})}, {{"to", DType::I64}}),
                   i64({2}, {-1, 2})));
}

TEST(ElementwiseOpTest, CastToBoolIsNonzeroTest) {
  Tensor x = f32({5}, {0, -0.0, 0.1, kNaN, -3});
  EXPECT_TRUE(same(run1("cast", {x}, {{"to", DType::I1}}), i1({5}, {0, 0, 1, 1, 1})));
  EXPECT_TRUE(
      same(run1("cast", {i64({3}, {0, -2, 256})}, {{"to", DType::I1}}), i1({3}, {0, 1, 1})));
  EXPECT_TRUE(same(run1("cast", {i32({2}, {0, 1})}, {{"to", DType::I1}}), i1({2}, {0, 1})));
}

TEST(ElementwiseOpTest, CastIntAndBoolToFloat) {
  // 2^24 + 1 is not a float32; it rounds to even, 2^24.
  EXPECT_TRUE(same(run1("cast", {i64({3}, {-3, 16777217, 0})}, {{"to", DType::F32}}),
                   f32({3}, {-3, 16777216, 0})));
  EXPECT_TRUE(same(run1("cast", {i32({2}, {-7, kI32Max})}, {{"to", DType::F64}}),
                   f64({2}, {-7, 2147483647})));
  EXPECT_TRUE(same(run1("cast", {i1({2}, {1, 0})}, {{"to", DType::F32}}), f32({2}, {1, 0})));
  EXPECT_TRUE(same(run1("cast", {i1({2}, {1, 0})}, {{"to", DType::I64}}), i64({2}, {1, 0})));
  // 2049 is not an f16 (ulp 2 in [2048, 4096)): ties to the even 2048.
  EXPECT_TRUE(same(run1("cast", {i64({2}, {2049, 2051})}, {{"to", DType::F16}}),
                   typed(DType::F16, {2}, {2048, 2052})));
}

TEST(ElementwiseOpTest, CastBetweenIntegerWidths) {
  // i64 -> i32 keeps the low 32 bits, as numpy's astype.
  EXPECT_TRUE(same(run1("cast", {i64({3}, {4294967301, -1, kI32Max})}, {{"to", DType::I32}}),
                   i32({3}, {5, -1, kI32Max})));
  EXPECT_TRUE(
      same(run1("cast", {i32({2}, {kI32Min, 3})}, {{"to", DType::I64}}), i64({2}, {kI32Min, 3})));
}

TEST(ElementwiseOpTest, CastBetweenFloatWidths) {
  Tensor x = f32({4}, {1 + 0x1p-11, 1 + 3 * 0x1p-11, 65520, 0.1});
  // f16 rounds to nearest even; 65520 is the first value that overflows to inf.
  EXPECT_TRUE(same(run1("cast", {x}, {{"to", DType::F16}}),
                   typed(DType::F16, {4}, {1, 1 + 0x1p-9, kInf, 0.0999755859375})));
  // bf16: 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6 and goes to the even one.
  Tensor y = f32({3}, {1 + 0x1p-8, 1 + 3 * 0x1p-8, 0.1});
  EXPECT_TRUE(same(run1("cast", {y}, {{"to", DType::BF16}}),
                   typed(DType::BF16, {3}, {1, 1 + 0x1p-6, 0.10009765625})));
  EXPECT_TRUE(
      same(run1("cast", {typed(DType::F16, {2}, {0.0999755859375, -kInf})}, {{"to", DType::F32}}),
           f32({2}, {0.0999755859375, -kInf})));
  EXPECT_TRUE(same(run1("cast", {f64({1}, {0.1})}, {{"to", DType::F32}}), f32({1}, {0.1})));
}

} // namespace
