//===- package/Base64.h - Binary data inside a package's JSON ---*- C++ -*-===//
//
// RFC 4648 base64 (with '=' padding), for the machine code a package carries
// beside its PTX. The runtime has no LLVM, so it has its own.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PACKAGE_BASE64_H
#define TESSEL_PACKAGE_BASE64_H

#include <optional>
#include <string>
#include <string_view>

namespace tessel {

std::string encodeBase64(std::string_view bytes);
/// nullopt when `text` is not base64 (a character outside the alphabet, a length
/// that is not a multiple of 4, or padding anywhere but at the end).
std::optional<std::string> decodeBase64(std::string_view text);

} // namespace tessel

#endif // TESSEL_PACKAGE_BASE64_H
