//===- test/interpreter/RuntimeHookTest.cpp - launches through the runtime ---===//
#include "test/interpreter/TestUtil.h"

#include "runtime/Interpret.h"
#include "runtime/Kernel.h"
#include "package/PackageBuilder.h"

#include <vector>

using namespace tessel;
using namespace tessel::interp;

namespace {

Package addPackage() {
  PackageBuilder builder("add.tslpkg", "test");
  builder.kernel("add", {{"x", ParamKind::Pointer, DType::F32},
                         {"y", ParamKind::Pointer, DType::F32},
                         {"out", ParamKind::Pointer, DType::F32},
                         {"n", ParamKind::Scalar, DType::I32}});
  builder.config();
  Variant &variant = builder.variant("add", "// not used by the interpreter\n");
  variant.arch = "sm_90";
  variant.tesselIR = test::kVectorAdd;
  // Through the file format: "tessel_ir" survives serialisation.
  return Package::parse(builder.build().serialize(), "add.tslpkg");
}

InterpretLaunch launchOf(const Package &package, int64_t gridX, const std::vector<Arg> &args) {
  InterpretLaunch launch;
  launch.kernel = &package.kernels[0];
  launch.variant = interpretedVariant(package.kernels[0], 0);
  launch.grid[0] = gridX;
  launch.args = args.data();
  launch.count = args.size();
  return launch;
}

TEST(RuntimeHook, PackageCarriesTesselIR) {
  Package package = addPackage();
  EXPECT_EQ(package.kernels[0].configs[0].variants[0].tesselIR, test::kVectorAdd);
  Package plain = package;
  plain.kernels[0].configs[0].variants[0].tesselIR.clear();
  EXPECT_EQ(plain.serialize().find("tessel_ir"), std::string::npos);
}

TEST(RuntimeHook, InterpretLaunchUsesRegisteredBuffers) {
  installRuntimeHook();
  Package package = addPackage();
  int n = 300;
  std::vector<float> x(n, 1.5f), y(n, 2.0f), out(n);
  ScopedHostBuffer bx(x.data(), x.size() * 4, "x"), by(y.data(), y.size() * 4, "y"),
      bo(out.data(), out.size() * 4, "out");
  std::vector<Arg> args = {x.data(), y.data(), out.data(), n};
  interpretLaunch(launchOf(package, 3, args));
  for (float v : out)
    ASSERT_EQ(v, 3.5f);
}

TEST(RuntimeHook, OutOfBoundsThrowsWithTheBufferName) {
  installRuntimeHook();
  Package package = addPackage();
  std::vector<float> x(100), y(100), out(100);
  ScopedHostBuffer bx(x.data(), 400, "x"), by(y.data(), 400, "y"), bo(out.data(), 400, "out");
  // n larger than the buffers: the mask does not protect the tail.
  std::vector<Arg> args = {x.data(), y.data(), out.data(), 128};
  try {
    interpretLaunch(launchOf(package, 1, args));
    FAIL() << "expected an out-of-bounds error";
  } catch (const Error &e) {
    std::string message = e.what();
    EXPECT_NE(message.find("out-of-bounds load"), std::string::npos) << message;
    EXPECT_NE(message.find("element 100 "), std::string::npos) << message;
    EXPECT_NE(message.find("buffer 'x'"), std::string::npos) << message;
  }
}

TEST(RuntimeHook, WithoutTheHookTheErrorSaysWhatToLink) {
  InterpretHook saved = interpretHook();
  setInterpretHook(nullptr);
  Package package = addPackage();
  std::vector<Arg> args = {nullptr, nullptr, nullptr, 0};
  try {
    interpretLaunch(launchOf(package, 1, args));
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("installRuntimeHook"), std::string::npos) << e.what();
  }
  setInterpretHook(saved);
}

TEST(RuntimeHook, InterpretModeFollowsTheEnvironment) {
  setInterpretMode(true);
  EXPECT_TRUE(interpretEnabled());
  setInterpretMode(false);
  EXPECT_FALSE(interpretEnabled());
  setInterpretMode(std::nullopt);
  setenv("TESSEL_INTERPRET", "1", 1);
  EXPECT_TRUE(interpretEnabled());
  unsetenv("TESSEL_INTERPRET");
  EXPECT_FALSE(interpretEnabled());
}

// The same test code as a GPU launch: Kernel::load + Kernel::launch on host pointers.
// Active once runtime/Kernel.cpp routes launches to the interpreter (see docs/debugging.md).
TEST(RuntimeHook, KernelLaunchRunsInTheInterpreter) {
  installRuntimeHook();
  setInterpretMode(true);
  Package package = addPackage();
  Kernel kernel;
  try {
    kernel = Kernel::load(package, "add");
  } catch (const Error &e) {
    setInterpretMode(std::nullopt);
    GTEST_SKIP() << "Kernel::load does not support interpretation yet: " << e.what();
  }
  int n = 200;
  std::vector<float> x(n, 1.0f), y(n, 0.25f), out(n);
  ScopedHostBuffer bx(x.data(), x.size() * 4, "x"), by(y.data(), y.size() * 4, "y"),
      bo(out.data(), out.size() * 4, "out");
  kernel.launch(Grid(2), {x.data(), y.data(), out.data(), n});
  setInterpretMode(std::nullopt);
  for (float v : out)
    ASSERT_EQ(v, 1.25f);
}

} // namespace
