//===- test/unit/VariantSelectTest.cpp - Choosing a variant ---------------===//
#include "TestPackages.h"

#include "runtime/Kernel.h"

#include <gtest/gtest.h>

using namespace tessel;

static const KernelInfo &softmax() {
  static const Package package = test::samplePackage();
  return package.kernel("softmax");
}

// Params: out=bit0, inp=bit1, stride=bit2, n_rows=bit3, n_cols=bit4.
constexpr uint64_t kAll = 0b11111;

TEST(VariantSelect, MostSpecialisedWhoseAssumptionsHold) {
  EXPECT_EQ(selectVariant(softmax(), 0, kAll, 80), 1);
  EXPECT_EQ(selectVariant(softmax(), 0, 0b10111, 80), 1); // n_rows not needed
  EXPECT_EQ(selectVariant(softmax(), 0, 0b00111, 80), 0); // n_cols odd
  EXPECT_EQ(selectVariant(softmax(), 0, 0, 80), 0);
  EXPECT_EQ(selectVariant(softmax(), 1, 0b00011, 80), 3);
  EXPECT_EQ(selectVariant(softmax(), 1, 0b00001, 80), 2);
}

TEST(VariantSelect, ArchDecides) {
  // On cc 9.0 the sm_90a variant beats the equally specialised sm_80 one.
  EXPECT_EQ(selectVariant(softmax(), 1, kAll, 90), 4);
  // sm_90a runs only on cc 9.0 exactly.
  EXPECT_EQ(selectVariant(softmax(), 1, kAll, 100), 3);
  // Nothing runs on an sm_75 device.
  EXPECT_EQ(selectVariant(softmax(), 0, kAll, 75), -1);
  EXPECT_EQ(selectVariant(softmax(), 7, kAll, 90), -1);
}

TEST(VariantSelect, RequiredDivisibility) {
  uint64_t mask = 0;
  EXPECT_TRUE(requiredDivisibility(softmax(), softmax().configs[0].variants[1], mask));
  EXPECT_EQ(mask, 0b10111u);
  EXPECT_TRUE(requiredDivisibility(softmax(), softmax().configs[0].variants[0], mask));
  EXPECT_EQ(mask, 0u);
}

TEST(VariantSelect, GridChecks) {
  EXPECT_NO_THROW(checkGrid(Grid(0), "k"));
  EXPECT_TRUE(Grid(0).empty());
  EXPECT_NO_THROW(checkGrid(Grid(INT32_MAX, 65535, 65535), "k"));
  try {
    checkGrid(Grid(4, 70000), "softmax");
    FAIL();
  } catch (const Error &error) {
    EXPECT_STREQ(error.what(),
                 "grid of softmax: y is 70000, expected a value in [0, 65535]");
  }
  EXPECT_THROW(checkGrid(Grid(-1), "k"), Error);
}
