//===- test/gpu/ExpectError.h - A call that must fail with a clear message -*- C++ -*-===//
#ifndef TESSEL_TEST_GPU_EXPECTERROR_H
#define TESSEL_TEST_GPU_EXPECTERROR_H

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>

namespace tessel::test {

/// Expects `fn` to throw an exception whose message contains `needle`.
inline void expectError(const std::function<void()> &fn, const std::string &needle) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

} // namespace tessel::test

#endif // TESSEL_TEST_GPU_EXPECTERROR_H
