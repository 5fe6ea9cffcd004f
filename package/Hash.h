//===- package/Hash.h - The 64-bit FNV-1a hash of the on-disk names -*- C++ -*-===//
//
// Package content hashes, source hashes, tuning-cache and JIT-cache file names are 64-bit
// FNV-1a: stable across platforms and releases (they name files that outlive a build), which
// std::hash and LLVM's hashing do not promise. One implementation for all of them.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PACKAGE_HASH_H
#define TESSEL_PACKAGE_HASH_H

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace tessel {

inline constexpr uint64_t kFnv1aOffsetBasis = 1469598103934665603ull;

/// FNV-1a of `text`, continuing from `hash` (chain calls to hash several strings).
inline uint64_t fnv1a(std::string_view text, uint64_t hash = kFnv1aOffsetBasis) {
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

/// A hash as 16 lowercase hex digits.
inline std::string toHex16(uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

/// FNV-1a of `text` as 16 hex digits.
inline std::string fnv1aHex(std::string_view text) { return toHex16(fnv1a(text)); }

} // namespace tessel

#endif // TESSEL_PACKAGE_HASH_H
