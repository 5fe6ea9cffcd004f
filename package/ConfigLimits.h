//===- package/ConfigLimits.h - The bounds of a config's launch settings -*- C++ -*-===//
//
// One set of limits for num_warps and num_stages: tesselc refuses a config outside
// them with a diagnostic at the value, and the package reader refuses a variant
// outside them, so neither accepts what the other would not.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PACKAGE_CONFIGLIMITS_H
#define TESSEL_PACKAGE_CONFIGLIMITS_H

#include <cstdint>

namespace tessel {

/// A program is at most 32 warps (1024 threads, the CUDA block limit).
inline constexpr int64_t kMaxNumWarps = 32;
/// Pipeline depth: more stages than this never fit shared memory.
inline constexpr int64_t kMaxNumStages = 32;

/// A power of two from 1 to kMaxNumWarps.
constexpr bool isValidNumWarps(int64_t warps) {
  return warps >= 1 && warps <= kMaxNumWarps && (warps & (warps - 1)) == 0;
}
/// 1 (no pipelining) to kMaxNumStages.
constexpr bool isValidNumStages(int64_t stages) {
  return stages >= 1 && stages <= kMaxNumStages;
}

} // namespace tessel

#endif // TESSEL_PACKAGE_CONFIGLIMITS_H
