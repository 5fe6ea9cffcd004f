//===- AgreementTest.cpp - the GPU and the CPU interpreter agree ----------===//
//
// Runs each case of AgreementCases.h on the GPU and compares with the output the
// interpreter produced for the same package and inputs (tools/gpu-check.sh prepare runs
// tessel-agreement-data and carries the files). Skipped without a GPU or the files.
//
//===----------------------------------------------------------------------===//
#include "test/gpu/agreement/AgreementCases.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace tessel;
using namespace tessel::gputest;

namespace {

class AgreementTest : public ::testing::TestWithParam<AgreementCase> {};

TEST_P(AgreementTest, GpuMatchesTheInterpreter) {
  const AgreementCase &c = GetParam();
  const char *dir = std::getenv("TESSEL_AGREEMENT_DIR");
  if (!Driver::isAvailable())
    GTEST_SKIP() << "no GPU: " << Driver::unavailableReason();
  if (!dir || std::string(TESSEL_KERNEL_PACKAGE_DIR).empty())
    GTEST_SKIP() << "set TESSEL_AGREEMENT_DIR to tessel-agreement-data's output";
  std::string expectedPath = std::string(dir) + "/" + c.name + ".out";
  if (!std::filesystem::exists(expectedPath))
    GTEST_SKIP() << "no interpreter output " << expectedPath;
  Driver::get().ensureCurrent(0);
  Package package =
      Package::load(std::string(TESSEL_KERNEL_PACKAGE_DIR) + "/" + c.package + ".tslpkg");
  Kernel kernel = Kernel::load(package, c.kernel);

  std::vector<HostArray> inputs;
  for (int i = 0; i < agreementInputs(c); ++i)
    inputs.push_back(agreementInput(c, 1 + i));
  HostArray out(c.storage, c.rows * c.cols);
  out.poison();
  std::vector<std::unique_ptr<DeviceArray>> device;
  device.push_back(std::make_unique<DeviceArray>(out));
  for (const HostArray &input : inputs)
    device.push_back(std::make_unique<DeviceArray>(input));
  launchAgreementCase(kernel, c, [&](int i) { return device[i]->pointer(); });
  device[0]->download(out);

  HostArray expected(c.storage, c.rows * c.cols);
  std::string bytes = readFile(expectedPath);
  ASSERT_EQ(bytes.size(), expected.bytes.size()) << expectedPath;
  std::memcpy(expected.bytes.data(), bytes.data(), bytes.size());
  int64_t bad = 0;
  for (int64_t i = 0; i < out.size; ++i) {
    double got = out.get(i), want = expected.get(i);
    if (!(std::abs(got - want) <= c.tolerance * std::abs(want) + c.tolerance * 1e-2) &&
        bad++ < 5)
      ADD_FAILURE() << c.name << " element " << i << ": GPU " << got << ", interpreter " << want;
  }
  EXPECT_EQ(bad, 0);
  EXPECT_TRUE(out.guardIntact());
}

INSTANTIATE_TEST_SUITE_P(Kernels, AgreementTest, ::testing::ValuesIn(agreementCases()),
                         [](const auto &info) { return info.param.name; });

} // namespace
