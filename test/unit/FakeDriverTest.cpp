//===- test/unit/FakeDriverTest.cpp - The launch path on a fake driver ----===//
//
// Runs tessel::Kernel against FakeCuda.cpp (selected with TESSEL_CUDA_LIBRARY
// before anything loads the driver), checking what reaches cuLaunchKernel:
// chosen entry, block size, shared memory, packed parameters, and that
// modules load once per context and unload with the kernel.
//
//===----------------------------------------------------------------------===//
#include "UseFakeDriver.h"

#include "package/PackageBuilder.h"
#include "runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <functional>

using namespace tessel;

namespace {
std::string ptxFor(const std::string &entry, const std::string &extra = "") {
  return ".version 8.0\n.target sm_80\n// params 4\n" + extra +
         ".visible .entry " + entry + "(...)\n{\n  ret;\n}\n";
}

/// Configs: 0 generic + specialised, 1 needs 100000 B shared (opt-in),
/// 2 needs 300000 B (too much), 3 sm_100a only, 4 too many registers.
Package fakePackage() {
  PackageBuilder builder("fake.tslpkg");
  builder.kernel("k",
                 {{"out", ParamKind::Pointer, DType::F32},
                  {"n", ParamKind::Scalar, DType::I32},
                  {"scale", ParamKind::Scalar, DType::F32},
                  {"big", ParamKind::Scalar, DType::I64}},
                 {"BLOCK"});
  auto variant = [&](int config, std::string entry, std::vector<std::string> div,
                     int warps = 4, int64_t shared = 64, std::string arch = "sm_80",
                     std::string extraPtx = "") {
    if (config == builder.current().configCount())
      builder.config({{"BLOCK", Json(128 << config)}}, warps);
    Variant &v = builder.variant(entry, ptxFor(entry, extraPtx), config);
    v.sharedBytes = shared;
    v.arch = std::move(arch);
    v.divisibleBy16 = std::move(div);
  };
  variant(0, "k_generic", {});
  variant(0, "k_spec", {"out", "n"});
  variant(1, "k_big", {}, 4, 100000);
  variant(2, "k_huge", {}, 4, 300000);
  variant(3, "k_blackwell", {}, 4, 64, "sm_100a");
  variant(4, "k_regs", {}, 16, 64, "sm_80", "// regs 255\n");
  return builder.build();
}

class FakeDriver : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(Driver::isAvailable()) << Driver::unavailableReason();
    fake().reset();
  }
  alignas(16) float buffer[64] = {};
  void *aligned() { return buffer; }
  void *misaligned() { return reinterpret_cast<char *>(buffer) + 4; }
};

std::string errorOf(const std::function<void()> &body) {
  try {
    body();
  } catch (const Error &error) {
    return error.what();
  }
  return "(no error)";
}
} // namespace

TEST_F(FakeDriver, DeviceInfo) {
  const DeviceInfo &info = Driver::get().deviceInfo(0);
  EXPECT_EQ(info.name, "Fake GPU");
  EXPECT_EQ(info.arch(), "sm_90");
  EXPECT_EQ(info.maxSharedPerBlockOptin, 232448);
  EXPECT_EQ(info.driverVersion, 13000);
  EXPECT_EQ(Driver::get().deviceCount(), 1);
}

TEST_F(FakeDriver, LaunchPicksVariantAndPacksParams) {
  Kernel kernel = Kernel::load(fakePackage(), "k");
  EXPECT_EQ(fake().currentContext, nullptr);
  kernel.launch({3, 2}, {aligned(), 32, 0.5f, int64_t(1) << 40});
  ASSERT_EQ(fake().launches.size(), 1u);
  const fakecuda::LaunchRecord &record = fake().launches.back();
  EXPECT_EQ(record.entry, "k_spec");
  EXPECT_EQ(record.grid[0], 3u);
  EXPECT_EQ(record.grid[1], 2u);
  EXPECT_EQ(record.grid[2], 1u);
  EXPECT_EQ(record.block[0], 128u);
  EXPECT_EQ(record.sharedBytes, 64u);
  EXPECT_EQ(record.stream, nullptr);
  ASSERT_EQ(record.params.size(), 4u);
  EXPECT_EQ(record.params[0], uint64_t(reinterpret_cast<uintptr_t>(buffer)));
  EXPECT_EQ(uint32_t(record.params[1]), 32u);
  float scale;
  uint32_t scaleBits = uint32_t(record.params[2]);
  std::memcpy(&scale, &scaleBits, 4);
  EXPECT_EQ(scale, 0.5f);
  EXPECT_EQ(record.params[3], uint64_t(1) << 40);
  // No context was current: the primary context was made current.
  EXPECT_NE(fake().currentContext, nullptr);

  kernel.launch(1, {aligned(), 33, 0.5f, 0});
  EXPECT_EQ(fake().launches.back().entry, "k_generic"); // n % 16 != 0
  kernel.launch(1, {misaligned(), 32, 0.5f, 0});
  EXPECT_EQ(fake().launches.back().entry, "k_generic"); // unaligned out
  kernel.launch(1, {aligned(), 48, 0.5f, 0});
  EXPECT_EQ(fake().launches.back().entry, "k_spec");
  EXPECT_EQ(fake().moduleLoads, 2); // once per variant and context
  EXPECT_EQ(kernel.chooseVariant({aligned(), 16, 1.0f, 0}, 0), 1);
}

TEST_F(FakeDriver, MachineCodeForThisDeviceIsLoadedInsteadOfPtx) {
  // The fake device is compute capability 9.0: sm_90 cubins run there, sm_80 ones not.
  Package package = fakePackage();
  std::vector<Variant> &variants = package.kernels[0].configs[0].variants;
  for (int i : {0, 1})
    variants[i].arch = "sm_90";
  variants[0].cubin = "\x7f" "ELF" + ptxFor("k_generic");
  variants[1].cubin = "\x7f" "ELF unreadable" + ptxFor("k_spec");
  Kernel kernel = Kernel::load(package, "k");
  kernel.launch(1, {aligned(), 33, 1.0f, 0}); // generic: its cubin
  EXPECT_EQ(fake().launches.back().entry, "k_generic");
  EXPECT_EQ(fake().moduleLoads, 1);
  EXPECT_EQ(fake().cubinLoads, 1);
  kernel.launch(1, {aligned(), 32, 1.0f, 0}); // specialised: refused cubin, then PTX
  EXPECT_EQ(fake().launches.back().entry, "k_spec");
  EXPECT_EQ(fake().moduleLoads, 2);
  EXPECT_EQ(fake().cubinLoads, 1);

  // A cubin for another capability is never handed to the driver: the PTX is JIT'd.
  Package older = fakePackage();
  older.kernels[0].configs[0].variants[0].cubin = "\x7f" "ELF" + ptxFor("k_generic");
  Kernel other = Kernel::load(older, "k");
  other.launch(1, {aligned(), 33, 1.0f, 0});
  EXPECT_EQ(fake().launches.back().entry, "k_generic");
  EXPECT_EQ(fake().moduleLoads, 3);
  EXPECT_EQ(fake().cubinLoads, 1);
}

TEST_F(FakeDriver, ModulesUnloadWithTheKernel) {
  {
    Kernel kernel = Kernel::load(fakePackage(), "k");
    Kernel copy = kernel; // handles share the loaded modules
    copy.launch(1, {aligned(), 1, 1.0f, 0});
    kernel.launch(1, {aligned(), 1, 1.0f, 0});
    EXPECT_EQ(fake().moduleLoads, 1);
  }
  EXPECT_EQ(fake().moduleUnloads, 1);
}

TEST_F(FakeDriver, EachContextGetsItsOwnModule) {
  Kernel kernel = Kernel::load(fakePackage(), "k");
  int contextA = 0, contextB = 0;
  fake().currentContext = &contextA;
  kernel.launch(1, {aligned(), 1, 1.0f, 0});
  fake().currentContext = &contextB;
  kernel.launch(1, {aligned(), 1, 1.0f, 0});
  kernel.launch(1, {aligned(), 1, 1.0f, 0});
  EXPECT_EQ(fake().moduleLoads, 2);
  EXPECT_EQ(fake().currentContext, &contextB); // left as the caller had it
}

TEST_F(FakeDriver, StreamIsPassedThrough) {
  Kernel kernel = Kernel::load(fakePackage(), "k");
  CUstream stream = reinterpret_cast<CUstream>(uintptr_t(0x5000));
  kernel.launch(1, {aligned(), 1, 1.0f, 0}, stream);
  EXPECT_EQ(fake().launches.back().stream, stream);
}

TEST_F(FakeDriver, SharedMemoryOptIn) {
  Kernel kernel = Kernel::load(fakePackage(), "k");
  kernel.launch(1, {aligned(), 1, 1.0f, 0}, nullptr, 1);
  EXPECT_EQ(fake().launches.back().entry, "k_big");
  EXPECT_EQ(fake().launches.back().sharedBytes, 100000u);
  ASSERT_EQ(fake().maxDynamicShared.size(), 1u);
  EXPECT_EQ(fake().maxDynamicShared[0].first, "k_big");
  EXPECT_EQ(fake().maxDynamicShared[0].second, 100000);
  // Under 48 KiB nothing is set.
  kernel.launch(1, {aligned(), 1, 1.0f, 0}, nullptr, 0);
  EXPECT_EQ(fake().maxDynamicShared.size(), 1u);
}

TEST_F(FakeDriver, ConfigsThatDoNotFit) {
  Kernel kernel = Kernel::load(fakePackage(), "k");
  std::vector<ConfigFit> fits = kernel.checkConfigs();
  ASSERT_EQ(fits.size(), 5u);
  EXPECT_TRUE(fits[0].fits);
  EXPECT_EQ(fits[0].registers, 32);
  EXPECT_TRUE(fits[1].fits);
  EXPECT_EQ(fits[1].sharedBytes, 100000);
  EXPECT_FALSE(fits[2].fits);
  EXPECT_EQ(fits[2].reason,
            "k config 2 (BLOCK=512 num_warps=4 num_stages=1) needs 300000 "
            "bytes of shared memory; Fake GPU allows at most 232448 bytes per "
            "block (opt-in)");
  EXPECT_FALSE(fits[3].fits);
  EXPECT_NE(fits[3].reason.find("no variant that runs on Fake GPU (sm_90); "
                                "its variants target sm_100a"),
            std::string::npos)
      << fits[3].reason;
  EXPECT_FALSE(fits[4].fits);
  EXPECT_NE(fits[4].reason.find("needs 512 threads per block at 255 "
                                "registers per thread"),
            std::string::npos)
      << fits[4].reason;

  EXPECT_EQ(errorOf([&] {
              kernel.launch(1, {aligned(), 1, 1.0f, 0}, nullptr, 2);
            }),
            fits[2].reason);
  EXPECT_EQ(errorOf([&] {
              kernel.launch(1, {aligned(), 1, 1.0f, 0}, nullptr, 9);
            }),
            "k has 5 configs, config 9 requested");
  EXPECT_EQ(fake().launches.size(), 0u);
}

TEST_F(FakeDriver, BadPtxShowsTheJitLog) {
  Package package = fakePackage();
  package.kernels[0].configs[0].variants[0].ptx = ptxFor("k_generic", "syntax error\n");
  Kernel kernel = Kernel::load(package, "k");
  EXPECT_EQ(errorOf([&] { kernel.launch(1, {aligned(), 1, 1.0f, 0}); }),
            "cuModuleLoadDataEx(k, config 0, variant 0) failed: "
            "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed): ptxas "
            "application ptx input, line 3; error: syntax error");
}

TEST_F(FakeDriver, MissingEntry) {
  Package package = fakePackage();
  package.kernels[0].configs[0].variants[0].entry = "nope";
  Kernel kernel = Kernel::load(package, "k");
  std::string message =
      errorOf([&] { kernel.launch(1, {aligned(), 1, 1.0f, 0}); });
  EXPECT_EQ(message.find("cuModuleGetFunction(k, config 0, variant 0, entry "
                         "'nope') failed: CUDA_ERROR_NOT_FOUND"),
            0u)
      << message;
  EXPECT_EQ(fake().moduleUnloads, 1); // the failed module is not leaked
}

TEST_F(FakeDriver, EmptyGridAndArgumentErrors) {
  Kernel kernel = Kernel::load(fakePackage(), "k");
  kernel.launch(0, {aligned(), 1, 1.0f, 0});
  EXPECT_EQ(fake().launches.size(), 0u);
  EXPECT_EQ(errorOf([&] { kernel.launch(1, {aligned(), 1, 1.0f}); }),
            "k expects 4 arguments (out, n, scale, big), got 3");
}

TEST_F(FakeDriver, PreloadAndExplain) {
  Kernel kernel = Kernel::load(fakePackage(), "k");
  kernel.preload(0);
  EXPECT_EQ(fake().moduleLoads, 2);
  kernel.launch(1, {aligned(), 16, 1.0f, 0});
  EXPECT_EQ(fake().moduleLoads, 2);
  std::vector<std::string> lines = kernel.explainVariants();
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[1], "variant 1: config 0 [BLOCK=128 num_warps=4 "
                      "num_stages=1] sm_80, 64 B shared, assumes 16 | out, n: "
                      "usable");
  EXPECT_NE(lines[4].find("not usable on sm_90"), std::string::npos);
  EXPECT_EQ(kernel.packageHash(), fakePackage().contentHash());
}

/// A map over `out` as an n x n matrix with row stride n, in 64 x 64 boxes: one CUtensorMap
/// after the 4 kernel params.
static TensorMapSpec outMap() {
  TensorMapSpec map;
  map.param = 4;
  map.pointer = 0;
  map.rows.param = 1;
  map.cols.param = 1;
  map.rowStride.param = 1;
  map.boxRows = map.boxCols = 64;
  return map;
}

/// fakePackage() whose specialised variant reads `map` (its PTX declares the 5th param).
static Package withSpecMap(const TensorMapSpec &map) {
  Package package = fakePackage();
  Variant &spec = package.kernels[0].configs[0].variants[1];
  spec.ptx = ptxFor("k_spec").replace(ptxFor("k_spec").find("// params 4"), 11, "// params 5");
  spec.tensorMaps = {map};
  package.validate();
  return package;
}

TEST_F(FakeDriver, TensorMapsAreEncodedFromTheArgumentsAndPassedLast) {
  // The specialised variant reads `out` as an n x n matrix with row stride n, in 64 x 64
  // boxes: one CUtensorMap after the 4 kernel params (PTX declares 5).
  Package package = withSpecMap(outMap());
  Variant &spec = package.kernels[0].configs[0].variants[1];
  Kernel k = Kernel::load(package, "k");
  k.launch(1, {aligned(), 32, 0.5f, 0});
  ASSERT_EQ(fake().tensorMaps.size(), 1u);
  // {cols, rows, row stride in bytes, box cols, box rows}
  EXPECT_EQ(fake().tensorMaps[0], (std::vector<uint64_t>{32, 32, 64, 64, 64}));
  const fakecuda::LaunchRecord &record = fake().launches.back();
  EXPECT_EQ(record.entry, "k_spec");
  EXPECT_EQ(record.params.size(), 5u);
  // The generic variant has no map: nothing is encoded.
  k.launch(1, {aligned(), 33, 0.5f, 0});
  EXPECT_EQ(fake().launches.back().entry, "k_generic");
  EXPECT_EQ(fake().tensorMaps.size(), 1u);
  // The same tensors again: the map encoded for them is reused, and still passed last.
  k.launch(1, {aligned(), 32, 0.5f, 0});
  EXPECT_EQ(fake().tensorMaps.size(), 1u);
  EXPECT_EQ(fake().launches.back().entry, "k_spec");
  EXPECT_EQ(fake().launches.back().params.size(), 5u);
  // Other sizes need a map of their own.
  k.launch(1, {aligned(), 48, 0.5f, 0});
  ASSERT_EQ(fake().tensorMaps.size(), 2u);
  EXPECT_EQ(fake().tensorMaps[1], (std::vector<uint64_t>{48, 48, 96, 64, 64}));
  // A row stride that is not a multiple of 16 bytes is refused by the encoder, with the
  // numbers in the message.
  spec.tensorMaps[0].rowStride = ParamOrValue{-1, 7};
  Kernel odd = Kernel::load(package, "k");
  std::string error = errorOf([&] { odd.launch(1, {aligned(), 32, 0.5f, 0}); });
  EXPECT_NE(error.find("cuTensorMapEncodeTiled"), std::string::npos) << error;
  EXPECT_NE(error.find("row stride 14 bytes"), std::string::npos) << error;
}

TEST_F(FakeDriver, InterleavedTensorMapsAreRankFour) {
  TensorMapSpec map = outMap();
  map.boxRows = 32;
  map.interleave8 = true;
  Package package = withSpecMap(map);
  Variant &spec = package.kernels[0].configs[0].variants[1];
  Kernel k = Kernel::load(package, "k");
  k.launch(1, {aligned(), 32, 0.5f, 0});
  ASSERT_EQ(fake().tensorMaps.size(), 1u);
  // dims {cols, k / 4 % 2, k % 4, k / 8}, strides {4, 1, 8} rows of 64 bytes, box
  // {64, 2, 4, 32 / 8}.
  EXPECT_EQ(fake().tensorMaps[0],
            (std::vector<uint64_t>{32, 2, 4, 4, 256, 64, 512, 64, 2, 4, 4}));
  // Rows that do not fill groups of 8 cannot be interleaved: said before encoding.
  spec.tensorMaps[0].rows = ParamOrValue{-1, 36};
  Kernel ragged = Kernel::load(package, "k");
  std::string error = errorOf([&] { ragged.launch(1, {aligned(), 32, 0.5f, 0}); });
  EXPECT_NE(error.find("interleaves rows in groups of 8, but the matrix has 36 rows"),
            std::string::npos)
      << error;
}

TEST_F(FakeDriver, ColumnBlocksBecomeAnOutermostDimensionWhereTheColumnsAreWhole) {
  // A tile two 64-column blocks wide (128 bytes of bf16 each), copied in one box when
  // the matrix's columns are whole blocks: dims {64, rows, cols / 64}, strides {row
  // stride, 128 bytes}, box {64, 64, 2}.
  TensorMapSpec map = outMap();
  map.colBlocks = 2;
  Package package = withSpecMap(map);
  Kernel k = Kernel::load(package, "k");
  k.launch(1, {aligned(), 128, 0.5f, 0});
  ASSERT_EQ(fake().tensorMaps.size(), 1u);
  EXPECT_EQ(fake().tensorMaps[0], (std::vector<uint64_t>{64, 128, 2, 256, 128, 64, 64, 2}));
  // 96 columns are not whole blocks: the plain map (the kernel copies block by block).
  k.launch(1, {aligned(), 96, 0.5f, 0});
  ASSERT_EQ(fake().tensorMaps.size(), 2u);
  EXPECT_EQ(fake().tensorMaps[1], (std::vector<uint64_t>{96, 96, 192, 64, 64}));
  // Interleaved rows (tf32's B) with whole blocks: rank 5, {64, 2, 4, rows / 8, cols / 64}.
  map.boxRows = 32;
  map.interleave8 = true;
  Package interleaved = withSpecMap(map);
  Kernel ki = Kernel::load(interleaved, "k");
  ki.launch(1, {aligned(), 128, 0.5f, 0});
  ASSERT_EQ(fake().tensorMaps.size(), 3u);
  EXPECT_EQ(fake().tensorMaps[2], (std::vector<uint64_t>{64, 2, 4, 16, 2, 1024, 256, 2048, 128,
                                                         64, 2, 4, 4, 2}));
}

TEST_F(FakeDriver, BatchedMapsHaveOneOuterDimensionPerBatchStride) {
  // A matrix of a batch (attention's k at b * k_sb + h * k_sh): dims {cols, rows, 2^31,
  // 2^31} (the kernel's i32 coordinates reach as far), strides {row stride, then each
  // batch stride in bytes}, boxes of 1 along them.
  TensorMapSpec map = outMap();
  map.batchStrides = {ParamOrValue{3, 0}, ParamOrValue{-1, 1024}};
  Package package = withSpecMap(map);
  Kernel k = Kernel::load(package, "k");
  k.launch(1, {aligned(), 32, 0.5f, int64_t(4096)});
  ASSERT_EQ(fake().tensorMaps.size(), 1u);
  uint64_t far = uint64_t(1) << 31;
  EXPECT_EQ(fake().tensorMaps[0],
            (std::vector<uint64_t>{32, 32, far, far, 64, 8192, 2048, 64, 64, 1, 1}));
  EXPECT_EQ(fake().launches.back().entry, "k_spec");
  // The same arguments reuse the map; another batch stride alone needs its own.
  k.launch(1, {aligned(), 32, 0.5f, int64_t(4096)});
  EXPECT_EQ(fake().tensorMaps.size(), 1u);
  k.launch(1, {aligned(), 32, 0.5f, int64_t(2048)});
  ASSERT_EQ(fake().tensorMaps.size(), 2u);
  EXPECT_EQ(fake().tensorMaps[1][5], 4096u);
  // With whole column blocks the block stays the third dimension, the batch after it.
  map.colBlocks = 2;
  Package blocks = withSpecMap(map);
  Kernel kb = Kernel::load(blocks, "k");
  kb.launch(1, {aligned(), 128, 0.5f, int64_t(4096)});
  ASSERT_EQ(fake().tensorMaps.size(), 3u);
  EXPECT_EQ(fake().tensorMaps[2], (std::vector<uint64_t>{64, 128, 2, far, far, 256, 128, 8192,
                                                         2048, 64, 64, 2, 1, 1}));
}

TEST_F(FakeDriver, MulticastMapsHaveAPieceBoxAndLaunchInClusters) {
  // Two programs of a cluster share each whole-blocks copy: the box is one of the tile's
  // two blocks ({64, 64, 1}), and the launch makes clusters of 2 along x where the grid's
  // x extent is even (cuLaunchKernelEx); an odd grid runs without clusters (each program
  // then fetches both pieces itself).
  TensorMapSpec map = outMap();
  map.colBlocks = 2;
  map.multicast = 2;
  Package package = withSpecMap(map);
  EXPECT_EQ(package.kernels[0].configs[0].variants[1].clusterSize(), 2);
  EXPECT_EQ(package.kernels[0].configs[0].variants[0].clusterSize(), 1);
  Kernel k = Kernel::load(package, "k");
  k.launch({4, 3}, {aligned(), 128, 0.5f, 0});
  ASSERT_EQ(fake().tensorMaps.size(), 1u);
  EXPECT_EQ(fake().tensorMaps[0], (std::vector<uint64_t>{64, 128, 2, 256, 128, 64, 64, 1}));
  EXPECT_EQ(fake().launches.back().entry, "k_spec");
  EXPECT_EQ(fake().launches.back().cluster, 2u);
  EXPECT_EQ(fake().launches.back().grid[0], 4u);
  EXPECT_EQ(fake().launches.back().grid[1], 3u);
  EXPECT_EQ(fake().launches.back().params.size(), 5u);
  k.launch(3, {aligned(), 128, 0.5f, 0});
  EXPECT_EQ(fake().launches.back().entry, "k_spec");
  EXPECT_EQ(fake().launches.back().cluster, 1u);
  // The generic variant has no multicast: no clusters.
  k.launch(4, {aligned(), 33, 0.5f, 0});
  EXPECT_EQ(fake().launches.back().entry, "k_generic");
  EXPECT_EQ(fake().launches.back().cluster, 1u);
}
