//===- UseFakeDriver.h - run a test binary against the fake libcuda ------===//
//
// Included by exactly one translation unit of a test binary built with
// TESSEL_FAKE_CUDA (the fake driver's path): before main() it points the runtime
// at the fake (the driver is loaded once per process), and fake() reaches the
// fake's state to script launch times and inspect what the runtime did.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TEST_UNIT_USEFAKEDRIVER_H
#define TESSEL_TEST_UNIT_USEFAKEDRIVER_H

#include "FakeCuda.h"
#include "runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>

#ifndef TESSEL_FAKE_CUDA
#error "TESSEL_FAKE_CUDA must name the fake driver library"
#endif

static const bool kUseFakeDriver = [] {
  ::setenv("TESSEL_CUDA_LIBRARY", TESSEL_FAKE_CUDA, 1);
  return true;
}();

namespace {
fakecuda::State &fake() {
  static fakecuda::State *state = [] {
    tessel::Driver::get();
    void *library = ::dlopen(TESSEL_FAKE_CUDA, RTLD_NOW | RTLD_NOLOAD);
    EXPECT_NE(library, nullptr);
    return reinterpret_cast<fakecuda::State *(*)()>(::dlsym(library, "fakeCudaState"))();
  }();
  return *state;
}
} // namespace

#endif // TESSEL_TEST_UNIT_USEFAKEDRIVER_H
