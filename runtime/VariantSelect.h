//===- runtime/VariantSelect.h - Which variant serves a launch --*- C++ -*-===//
//
// A configuration's variants differ in what they assume (parameters divisible by 16) and
// in their arch. A launch takes the most specialised variant whose assumptions the
// arguments meet and whose arch the device runs, the closest arch first.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_VARIANTSELECT_H
#define TESSEL_RUNTIME_VARIANTSELECT_H

#include "package/Package.h"

#include <cstdint>
#include <vector>

namespace tessel {

/// Bits (param index) of the params a variant assumes divisible by 16; false
/// when one of them is beyond the 64 tracked parameters (variant unusable).
bool requiredDivisibility(const KernelInfo &kernel, const Variant &variant,
                          uint64_t &mask);

/// A variant a launch of its configuration may use, and the divisibility it needs.
struct VariantCandidate {
  int variant; // index into KernelInfo::allVariants()
  uint64_t required;
};

/// The variants of `config` usable on `capability` (major*10+minor), best first: most
/// specialised, then closest arch, then package order.
std::vector<VariantCandidate> orderedCandidates(const KernelInfo &kernel, int config,
                                                int capability);

/// The first of `candidates` whose assumptions `divisibleMask` (see PackedArgs) meets, or -1.
inline int firstMet(const std::vector<VariantCandidate> &candidates, uint64_t divisibleMask) {
  for (const VariantCandidate &candidate : candidates)
    if ((candidate.required & ~divisibleMask) == 0)
      return candidate.variant;
  return -1;
}

/// The index into kernel.allVariants() of the most specialised variant of
/// `config` whose divisibility assumptions hold for `divisibleMask` (see
/// PackedArgs) and whose arch runs on `capability`; -1 when none does.
int selectVariant(const KernelInfo &kernel, int config, uint64_t divisibleMask,
                  int capability);

} // namespace tessel

#endif // TESSEL_RUNTIME_VARIANTSELECT_H
