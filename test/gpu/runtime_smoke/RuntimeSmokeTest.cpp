//===- test/gpu/runtime_smoke/RuntimeSmokeTest.cpp - Runtime on a real GPU ===//
//
// Loads a package built around an nvcc-generated PTX vector add, launches it
// through tessel::Kernel and checks the result on the host. Skips (with the
// reason) where there is no CUDA driver or device.
//
//===----------------------------------------------------------------------===//
#include "package/PackageBuilder.h"
#include "runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace tessel;

#ifndef TESSEL_SMOKE_PTX
#error "TESSEL_SMOKE_PTX must name vector_add.ptx"
#endif

namespace {
constexpr int kBlock = 128; // num_warps = 4

/// Device memory owned for the duration of a test.
class DeviceBuffer {
public:
  explicit DeviceBuffer(size_t bytes) : driver_(Driver::get()) {
    driver_.check(driver_.memAlloc(&address_, bytes), "cuMemAlloc");
  }
  ~DeviceBuffer() { driver_.memFree(address_); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  CUdeviceptr address() const { return address_; }
  void *pointer() const { return reinterpret_cast<void *>(address_); }

private:
  Driver &driver_;
  CUdeviceptr address_ = 0;
};

/// Config 0: the generic variant and one assuming aligned pointers and n % 16
/// == 0 (same code, so both give the right answer). Config 1 asks for 64 KiB
/// of dynamic shared memory (needs the opt-in attribute). Config 2 asks for
/// more shared memory than any GPU has.
Package vectorAddPackage() {
  PackageBuilder builder("vector_add.tslpkg", "nvcc (test data)");
  builder.kernel("vector_add", {{"out", ParamKind::Pointer, DType::F32},
                                {"a", ParamKind::Pointer, DType::F32},
                                {"b", ParamKind::Pointer, DType::F32},
                                {"n", ParamKind::Scalar, DType::I32},
                                {"alpha", ParamKind::Scalar, DType::F32}});
  std::string ptx = readFile(TESSEL_SMOKE_PTX);
  auto variant = [&](int config, int64_t shared, std::vector<std::string> divisible) {
    if (config == builder.current().configCount())
      builder.config({}, kBlock / 32);
    Variant &v = builder.variant("vector_add", ptx, config);
    v.sharedBytes = shared;
    v.divisibleBy16 = std::move(divisible);
  };
  variant(0, 0, {});
  variant(0, 0, {"out", "a", "b", "n"});
  variant(1, 64 * 1024, {});
  variant(2, int64_t(1) << 30, {});
  return builder.build();
}

class RuntimeSmoke : public ::testing::Test {
protected:
  void SetUp() override {
    if (!Driver::isAvailable())
      GTEST_SKIP() << "no usable CUDA driver/device: "
                   << Driver::unavailableReason();
    Driver::get().ensureCurrent(0);
  }

  /// Runs out = a + 0.5 * b for n elements with `config` and checks it.
  void runVectorAdd(const Kernel &kernel, int n, int config,
                    CUstream stream = nullptr) {
    Driver &driver = Driver::get();
    std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      a[size_t(i)] = float(i);
      b[size_t(i)] = float(2 * i + 1);
    }
    size_t bytes = size_t(n) * sizeof(float);
    DeviceBuffer dOut(bytes + 64), dA(bytes), dB(bytes);
    driver.check(driver.memcpyHtoD(dA.address(), a.data(), bytes), "HtoD");
    driver.check(driver.memcpyHtoD(dB.address(), b.data(), bytes), "HtoD");
    // Poison the tail: a kernel writing past n would be caught.
    driver.check(driver.memsetD8(dOut.address(), 0xFF, bytes + 64), "memset");
    int blocks = (n + kBlock - 1) / kBlock;
    kernel.launch(blocks, {dOut.pointer(), dA.pointer(), dB.pointer(), n, 0.5f},
                  stream, config);
    driver.check(driver.ctxSynchronize(), "cuCtxSynchronize");
    std::vector<float> result(size_t(n) + 16);
    driver.check(driver.memcpyDtoH(result.data(), dOut.address(),
                                   bytes + 16 * sizeof(float)),
                 "DtoH");
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(result[size_t(i)], a[size_t(i)] + 0.5f * b[size_t(i)])
          << "element " << i;
    for (int i = n; i < n + 16; ++i)
      ASSERT_TRUE(std::isnan(result[size_t(i)])) << "wrote past n at " << i;
  }
};
} // namespace

TEST_F(RuntimeSmoke, DeviceInfo) {
  const DeviceInfo &info = Driver::get().deviceInfo(0);
  EXPECT_FALSE(info.name.empty());
  EXPECT_GE(info.capability(), 50);
  EXPECT_GT(info.multiprocessors, 0);
  EXPECT_GE(info.maxSharedPerBlockOptin, info.maxSharedPerBlock);
  EXPECT_GT(info.registersPerBlock, 0);
  EXPECT_GT(info.driverVersion, 0);
  std::cout << "device 0: " << info.name << " (" << info.arch() << ", "
            << info.multiprocessors << " SMs, "
            << info.maxSharedPerBlockOptin << " B shared opt-in, driver "
            << info.driverVersion << ")\n";
}

TEST_F(RuntimeSmoke, VectorAddGenericVariant) {
  Kernel kernel = Kernel::load(vectorAddPackage(), "vector_add");
  int n = 1000; // not a multiple of the block, nor of 16
  DeviceBuffer buffer(64);
  EXPECT_EQ(kernel.chooseVariant({buffer.pointer(), buffer.pointer(),
                                  buffer.pointer(), n, 0.5f},
                                 0),
            0);
  runVectorAdd(kernel, n, 0);
  runVectorAdd(kernel, 1, 0);
}

TEST_F(RuntimeSmoke, VectorAddSpecialisedVariant) {
  Kernel kernel = Kernel::load(vectorAddPackage(), "vector_add");
  int n = 16 * 1000 + 16; // multiple of 16, not of the block
  DeviceBuffer buffer(64);
  EXPECT_EQ(kernel.chooseVariant({buffer.pointer(), buffer.pointer(),
                                  buffer.pointer(), n, 0.5f},
                                 0),
            1);
  runVectorAdd(kernel, n, 0);
  for (const std::string &line : kernel.explainVariants())
    std::cout << line << "\n";
}

TEST_F(RuntimeSmoke, OnAStream) {
  Driver &driver = Driver::get();
  CUstream stream = nullptr;
  driver.check(driver.streamCreate(&stream, CU_STREAM_NON_BLOCKING),
               "cuStreamCreate");
  Kernel kernel = Kernel::load(vectorAddPackage(), "vector_add");
  runVectorAdd(kernel, 4097, 0, stream);
  driver.streamDestroy(stream);
}

TEST_F(RuntimeSmoke, LargeSharedMemoryNeedsOptIn) {
  const DeviceInfo &info = Driver::get().deviceInfo(0);
  if (info.maxSharedPerBlockOptin < 64 * 1024)
    GTEST_SKIP() << info.name << " has no 64 KiB of shared memory per block";
  Kernel kernel = Kernel::load(vectorAddPackage(), "vector_add");
  ConfigFit fit = kernel.checkConfig(1);
  EXPECT_TRUE(fit.fits) << fit.reason;
  EXPECT_GT(fit.registers, 0);
  runVectorAdd(kernel, 777, 1);
}

TEST_F(RuntimeSmoke, OversizedConfigIsRefused) {
  Kernel kernel = Kernel::load(vectorAddPackage(), "vector_add");
  std::vector<ConfigFit> fits = kernel.checkConfigs();
  ASSERT_EQ(fits.size(), 3u);
  EXPECT_TRUE(fits[0].fits) << fits[0].reason;
  EXPECT_FALSE(fits[2].fits);
  EXPECT_NE(fits[2].reason.find("needs 1073741824 bytes of shared memory"),
            std::string::npos)
      << fits[2].reason;
  DeviceBuffer buffer(64);
  try {
    kernel.launch(1, {buffer.pointer(), buffer.pointer(), buffer.pointer(), 1,
                      0.5f},
                  nullptr, 2);
    FAIL() << "oversized config launched";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("(opt-in)"), std::string::npos)
        << error.what();
  }
}

TEST_F(RuntimeSmoke, BadPtxReportsTheJitLog) {
  Package package = vectorAddPackage();
  for (Config &config : package.kernels[0].configs)
    for (Variant &variant : config.variants)
      variant.ptx = ".version 8.0\n.target sm_80\n.address_size 64\n"
                  ".visible .entry vector_add() { this is not ptx; }\n";
  Kernel kernel = Kernel::load(package, "vector_add");
  DeviceBuffer buffer(64);
  try {
    kernel.launch(1, {buffer.pointer(), buffer.pointer(), buffer.pointer(), 1,
                      0.5f});
    FAIL() << "bad PTX launched";
  } catch (const Error &error) {
    std::string message = error.what();
    EXPECT_NE(message.find("cuModuleLoadDataEx(vector_add, config 0"),
              std::string::npos)
        << message;
    std::cout << "message: " << message << "\n";
  }
}

TEST_F(RuntimeSmoke, ArgumentErrorsAreCaughtBeforeLaunch) {
  Kernel kernel = Kernel::load(vectorAddPackage(), "vector_add");
  DeviceBuffer buffer(64);
  EXPECT_THROW(kernel.launch(1, {buffer.pointer(), buffer.pointer(), 1, 0.5f}),
               Error);
  EXPECT_THROW(kernel.launch(1, {buffer.pointer(), buffer.pointer(),
                                 buffer.pointer(), 1.0f, 0.5f}),
               Error);
  // An empty grid launches nothing and is not an error.
  EXPECT_NO_THROW(kernel.launch(0, {buffer.pointer(), buffer.pointer(),
                                    buffer.pointer(), 0, 0.5f}));
}
