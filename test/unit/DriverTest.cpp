//===- test/unit/DriverTest.cpp - The driver on a machine without one -----===//
//
// Unit tests run on CI machines without an NVIDIA driver: loading must fail
// with a clear message, never crash, and everything that needs the driver
// must say so.
//
//===----------------------------------------------------------------------===//
#include "TestPackages.h"

#include "runtime/Driver.h"
#include "runtime/Kernel.h"

#include <gtest/gtest.h>

using namespace tessel;

TEST(Driver, UnavailableWithoutLibcuda) {
  if (Driver::isAvailable())
    GTEST_SKIP() << "a CUDA driver is present; this test covers its absence";
  EXPECT_FALSE(Driver::isAvailable());
  std::string reason = Driver::unavailableReason();
  EXPECT_FALSE(reason.empty());
  try {
    Driver::get();
    FAIL() << "Driver::get() did not throw";
  } catch (const Error &error) {
    std::string message = error.what();
    EXPECT_NE(message.find("libcuda.so.1"), std::string::npos) << message;
    EXPECT_EQ(message, reason);
  }
  // The outcome is stable.
  EXPECT_THROW(Driver::get(), Error);
}

TEST(Driver, KernelLoadFailsClearly) {
  if (Driver::isAvailable())
    GTEST_SKIP() << "a CUDA driver is present; this test covers its absence";
  Package package = test::samplePackage();
  try {
    Kernel::load(package, "softmax");
    FAIL();
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("libcuda.so.1"),
              std::string::npos);
  }
  // A bad kernel name is reported before the driver is needed.
  try {
    Kernel::load(package, "nope");
    FAIL();
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("available: softmax, add"),
              std::string::npos);
  }
}

TEST(Driver, EmptyKernelHandle) {
  Kernel kernel;
  EXPECT_FALSE(kernel);
  EXPECT_THROW(kernel.launch(1, {}), Error);
}
