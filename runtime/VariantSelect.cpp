//===- runtime/VariantSelect.cpp - Which variant serves a launch ----------===//
#include "runtime/VariantSelect.h"

#include <algorithm>

using namespace tessel;

bool tessel::requiredDivisibility(const KernelInfo &kernel,
                                  const Variant &variant, uint64_t &mask) {
  mask = 0;
  for (const std::string &name : variant.divisibleBy16) {
    int index = kernel.paramIndex(name);
    if (index < 0 || index >= 64)
      return false;
    mask |= uint64_t(1) << index;
  }
  return true;
}

static int popcount(uint64_t x) { return __builtin_popcountll(x); }

/// Rank of an arch among the ones a device supports: closer targets first
/// (sm_90a before sm_90 before sm_80 on an H100).
static int archRank(const std::string &arch) {
  int capability = 0;
  char suffix = 0;
  parseArch(arch, capability, suffix);
  return capability * 4 + (suffix == 'a' ? 2 : suffix == 'f' ? 1 : 0);
}

std::vector<VariantCandidate> tessel::orderedCandidates(const KernelInfo &kernel, int config,
                                                        int capability) {
  std::vector<const Variant *> variants = kernel.allVariants();
  std::vector<VariantCandidate> result;
  for (size_t i = 0; i < variants.size(); ++i) {
    const Variant &variant = *variants[i];
    uint64_t required = 0;
    if (variant.config != config || !archSupported(variant.arch, capability) ||
        !requiredDivisibility(kernel, variant, required))
      continue;
    result.push_back({int(i), required});
  }
  std::stable_sort(result.begin(), result.end(),
                   [&](const VariantCandidate &a, const VariantCandidate &b) {
                     int pa = popcount(a.required), pb = popcount(b.required);
                     if (pa != pb)
                       return pa > pb;
                     return archRank(variants[size_t(a.variant)]->arch) >
                            archRank(variants[size_t(b.variant)]->arch);
                   });
  return result;
}

int tessel::selectVariant(const KernelInfo &kernel, int config,
                          uint64_t divisibleMask, int capability) {
  return firstMet(orderedCandidates(kernel, config, capability), divisibleMask);
}
