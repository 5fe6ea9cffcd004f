//===- test/interpreter/FloatBitsTest.cpp - f16/bf16 emulation is exact -----===//
#include "interpreter/FloatBits.h"
#include "runtime/Args.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace tessel::interp;

TEST(FloatBits, HalfRoundTripsEveryPattern) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = halfToFloat(uint16_t(h));
    if (std::isnan(f))
      continue;
    ASSERT_EQ(floatToHalf(f), h) << std::hex << h;
  }
}

TEST(FloatBits, BF16RoundTripsEveryPattern) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = bf16ToFloat(uint16_t(h));
    if (std::isnan(f))
      continue;
    ASSERT_EQ(floatToBF16(f), h) << std::hex << h;
  }
}

// The float paths, the double paths and the runtime's argument packing agree.
TEST(FloatBits, FloatAndDoubleRoundingAgree) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    float f = bitsFloat(bits(rng));
    if (std::isnan(f))
      continue;
    ASSERT_EQ(floatBits(roundToHalf(f)), floatBits(doubleToHalfValue(f))) << f;
    ASSERT_EQ(floatBits(roundToBF16(f)), floatBits(doubleToBF16Value(f))) << f;
    ASSERT_EQ(floatToHalf(f), tessel::floatToHalfBits(f)) << f;
    ASSERT_EQ(floatToBF16(f), tessel::floatToBFloat16Bits(f)) << f;
  }
}

TEST(FloatBits, TF32RoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to the even neighbour (1);
  // 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 and 1 + 2^-9: up to the even one.
  EXPECT_EQ(roundToTF32(1.0f + 0x1p-11f), 1.0f);
  EXPECT_EQ(roundToTF32(1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);
  EXPECT_EQ(roundToTF32(-(1.0f + 3 * 0x1p-11f)), -(1.0f + 0x1p-9f));
  // Not a tie: to nearest.
  EXPECT_EQ(roundToTF32(1.0f + 0x1p-11f + 0x1p-20f), 1.0f + 0x1p-10f);
  EXPECT_TRUE(std::isinf(roundToTF32(INFINITY)));
  EXPECT_TRUE(std::isnan(roundToTF32(NAN)));
}
