//===- package/Error.h - The runtime's exception type -----------*- C++ -*-===//
//
// The runtime faces C++ applications and LibTorch, so it reports failures as
// exceptions carrying a complete, human-readable message (what failed, on
// which kernel/file/field, and what was expected).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PACKAGE_ERROR_H
#define TESSEL_PACKAGE_ERROR_H

#include <stdexcept>
#include <string>

namespace tessel {

/// Every error the runtime raises; what() is the full message.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

} // namespace tessel

#endif // TESSEL_PACKAGE_ERROR_H
