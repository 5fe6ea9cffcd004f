//===- test/unit/ArgsTest.cpp - Argument checking and packing -------------===//
#include "TestPackages.h"

#include "runtime/Args.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace tessel;

static const KernelInfo &softmax() {
  static const Package package = test::samplePackage();
  return package.kernel("softmax");
}

static std::string packError(const KernelInfo &kernel,
                             std::initializer_list<Arg> args) {
  PackedArgs packed;
  try {
    packArgs(kernel, args.begin(), args.size(), packed);
  } catch (const Error &error) {
    return error.what();
  }
  return "(no error)";
}

template <typename T> static T slotAs(const PackedArgs &packed, size_t i) {
  T value;
  std::memcpy(&value, packed.slot(i), sizeof(T));
  return value;
}

TEST(Args, ImplicitConstruction) {
  float *devicePtr = reinterpret_cast<float *>(uintptr_t(0x1000));
  EXPECT_EQ(Arg(devicePtr).kind(), Arg::Kind::Pointer);
  EXPECT_EQ(Arg(static_cast<const void *>(devicePtr)).address(), 0x1000u);
  EXPECT_EQ(Arg(nullptr).kind(), Arg::Kind::Pointer);
  EXPECT_EQ(Arg::pointer(CUdeviceptr(0x2000)).address(), 0x2000u);
  EXPECT_EQ(Arg(CUdeviceptr(0x2000)).kind(), Arg::Kind::UInt64);
  EXPECT_EQ(Arg(int32_t(5)).kind(), Arg::Kind::Int32);
  EXPECT_EQ(Arg(short(5)).kind(), Arg::Kind::Int32);
  EXPECT_EQ(Arg(5u).kind(), Arg::Kind::Int64);
  EXPECT_EQ(Arg(int64_t(5)).kind(), Arg::Kind::Int64);
  EXPECT_EQ(Arg(size_t(5)).kind(), Arg::Kind::UInt64);
  EXPECT_EQ(Arg(1.5f).kind(), Arg::Kind::Float32);
  EXPECT_EQ(Arg(1.5).kind(), Arg::Kind::Float64);
  EXPECT_EQ(Arg(true).kind(), Arg::Kind::Bool);
}

TEST(Args, PacksAtParamWidths) {
  float *out = reinterpret_cast<float *>(uintptr_t(0x10000));
  PackedArgs packed;
  std::initializer_list<Arg> args = {out, Arg::pointer(0x20008), int64_t(32),
                                     7, size_t(48)};
  packArgs(softmax(), args.begin(), args.size(), packed);
  ASSERT_EQ(packed.size(), 5u);
  EXPECT_EQ(slotAs<uint64_t>(packed, 0), 0x10000u);
  EXPECT_EQ(slotAs<uint64_t>(packed, 1), 0x20008u);
  EXPECT_EQ(slotAs<int32_t>(packed, 2), 32); // i64 value into an i32 param
  EXPECT_EQ(slotAs<int64_t>(packed, 3), 7);  // i32 value into an i64 param
  EXPECT_EQ(slotAs<int32_t>(packed, 4), 48);
  // out aligned, inp not (0x20008), stride 32, n_rows 7 no, n_cols 48.
  EXPECT_EQ(packed.divisibleMask(), 0b10101u);
}

TEST(Args, CountErrorListsParams) {
  EXPECT_EQ(packError(softmax(), {nullptr, nullptr, 1, 2}),
            "softmax expects 5 arguments (out, inp, stride, n_rows, n_cols), "
            "got 4");
}

TEST(Args, TypeErrorsNameTheArgument) {
  EXPECT_EQ(packError(softmax(), {nullptr, nullptr, 1.0f, 2, 3}),
            "argument 3 'stride' of softmax: expected i32, got f32");
  EXPECT_EQ(packError(softmax(), {nullptr, 4, 1, 2, 3}),
            "argument 2 'inp' of softmax: expected a pointer (*f32), got i32 4");
  EXPECT_EQ(packError(softmax(), {nullptr, nullptr, 1, nullptr, 3}),
            "argument 4 'n_rows' of softmax: expected i64, got pointer");
  EXPECT_EQ(packError(softmax(), {nullptr, nullptr, true, 2, 3}),
            "argument 3 'stride' of softmax: expected i32, got bool");
}

TEST(Args, RangeErrors) {
  EXPECT_EQ(packError(softmax(), {nullptr, nullptr, int64_t(1) << 32, 2, 3}),
            "argument 3 'stride' of softmax: value 4294967296 does not fit i32");
  EXPECT_EQ(packError(softmax(), {nullptr, nullptr, 1, ~uint64_t(0), 3}),
            "argument 4 'n_rows' of softmax: value 18446744073709551615 does "
            "not fit i64");
  EXPECT_EQ(packError(softmax(), {nullptr, nullptr, int64_t(INT32_MIN), 2, 3}),
            "(no error)");
}

TEST(Args, FloatParams) {
  KernelInfo kernel;
  kernel.name = "scale";
  kernel.params = {{"a", ParamKind::Scalar, DType::F32},
                   {"b", ParamKind::Scalar, DType::F64},
                   {"c", ParamKind::Scalar, DType::F16},
                   {"d", ParamKind::Scalar, DType::BF16},
                   {"e", ParamKind::Scalar, DType::I1},
                   {"f", ParamKind::Scalar, DType::I8}};
  PackedArgs packed;
  std::initializer_list<Arg> args = {0.5, 0.25f, 1.0, -2.0f, true, -3};
  packArgs(kernel, args.begin(), args.size(), packed);
  EXPECT_EQ(slotAs<float>(packed, 0), 0.5f);
  EXPECT_EQ(slotAs<double>(packed, 1), 0.25);
  EXPECT_EQ(slotAs<uint16_t>(packed, 2), 0x3C00);
  EXPECT_EQ(slotAs<uint16_t>(packed, 3), 0xC000);
  EXPECT_EQ(slotAs<int8_t>(packed, 4), 1);
  EXPECT_EQ(slotAs<int8_t>(packed, 5), -3);
  EXPECT_EQ(packed.divisibleMask(), 0u); // floats never count
  EXPECT_EQ(packError(kernel, {1, 0.25f, 1.0, -2.0f, true, -3}),
            "argument 1 'a' of scale: expected f32, got i32");
  EXPECT_EQ(packError(kernel, {0.5, 0.25f, 1.0, -2.0f, 2, -3}),
            "argument 5 'e' of scale: value 2 does not fit i1");
  EXPECT_EQ(packError(kernel, {0.5, 0.25f, 1.0, -2.0f, 1, 300}),
            "argument 6 'f' of scale: value 300 does not fit i8");
}

TEST(Args, ManyParamsUseTheHeap) {
  KernelInfo kernel;
  kernel.name = "wide";
  std::vector<Arg> args;
  for (int i = 0; i < 70; ++i) {
    kernel.params.push_back(
        {"p" + std::to_string(i), ParamKind::Scalar, DType::I32});
    args.push_back(i * 16);
  }
  PackedArgs packed;
  packArgs(kernel, args.data(), args.size(), packed);
  EXPECT_EQ(packed.size(), 70u);
  EXPECT_EQ(slotAs<int32_t>(packed, 69), 69 * 16);
  EXPECT_EQ(packed.divisibleMask(), ~uint64_t(0)); // first 64 tracked
}

TEST(Args, HalfConversion) {
  EXPECT_EQ(floatToHalfBits(0.0f), 0x0000);
  EXPECT_EQ(floatToHalfBits(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalfBits(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalfBits(65504.0f), 0x7BFF);
  EXPECT_EQ(floatToHalfBits(65520.0f), 0x7C00); // rounds to inf
  EXPECT_EQ(floatToHalfBits(1e-8f), 0x0000);
  EXPECT_EQ(floatToHalfBits(5.960464477539063e-08f), 0x0001); // 2^-24
  EXPECT_EQ(floatToHalfBits(6.103515625e-05f), 0x0400);       // 2^-14
  EXPECT_EQ(floatToHalfBits(1.0f + 1.0f / 2048), 0x3C00); // tie to even
  EXPECT_EQ(floatToHalfBits(1.0f + 3.0f / 2048), 0x3C02); // tie to even
  EXPECT_EQ(floatToHalfBits(INFINITY), 0x7C00);
  EXPECT_EQ(floatToHalfBits(NAN) & 0x7C00, 0x7C00);
  EXPECT_NE(floatToHalfBits(NAN) & 0x03FF, 0);
  EXPECT_EQ(floatToBFloat16Bits(1.0f), 0x3F80);
  EXPECT_EQ(floatToBFloat16Bits(-2.0f), 0xC000);
  EXPECT_EQ(floatToBFloat16Bits(1.00390625f), 0x3F80); // tie to even
  EXPECT_EQ(floatToBFloat16Bits(1.01171875f), 0x3F82); // tie to even (up)
}
