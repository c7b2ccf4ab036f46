#include "shardc/ir/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace shardc;

TEST(TensorTest, HalfConversionKnownValues) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff); // largest finite half
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // ties to even: rounds up to inf
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);            // smallest subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);            // tie to even: zero
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);     // tie to even: down
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02); // tie to even: up
  EXPECT_EQ(floatToHalf(INFINITY), 0x7c00);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
  EXPECT_EQ(halfToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
}

TEST(TensorTest, HalfRoundTripsEveryPattern) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = halfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(floatToHalf(f), h) << "pattern " << h;
  }
}

TEST(TensorTest, BFloat16Rounding) {
  EXPECT_EQ(floatToBF16(1.0f), 0x3f80);
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (down).
  EXPECT_EQ(floatToBF16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(floatToBF16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBF16(NAN))));
}

TEST(TensorTest, ElementAccessRoundsToDType) {
  Tensor t(TensorType{DType::I32, {3}});
  t.setInt(0, (int64_t(1) << 32) + 5); // wraps to i32
  t.setDouble(1, -2.7);                // truncates toward zero
  t.setDouble(2, NAN);                 // NaN to integer is 0
  EXPECT_EQ(t.getInt(0), 5);
  EXPECT_EQ(t.getInt(1), -2);
  EXPECT_EQ(t.getInt(2), 0);
  Tensor b(TensorType{DType::I1, {2}});
  b.setInt(0, 7);
  b.setDouble(1, 0.0);
  EXPECT_EQ(b.getInt(0), 1);
  EXPECT_EQ(b.getInt(1), 0);
  Tensor f(TensorType{DType::F32, {1}});
  f.setDouble(0, 0.1);
  EXPECT_EQ(f.getDouble(0), static_cast<double>(0.1f));
}
