//===- runtime/KernelConfig.h - prune conditions for a launch ---*- C++ -*-===//
//
// The @autotune prune condition evaluated for a configuration (Package.h's Config) and a
// launch: the autotuner drops pruned configs
// from tuning, and every entry point that launches an explicit config (Kernel::launch,
// TESSEL_INTERPRET=1, tessel-interpret) refuses one the condition rules out through
// checkConfigServes (softmax with a block shorter than the row would leave columns unwritten).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_KERNELCONFIG_H
#define TESSEL_RUNTIME_KERNELCONFIG_H

#include "runtime/Args.h"
#include "package/Json.h"
#include "package/Package.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace tessel {

class ConfigExpr;

/// Why `prune` (the kernel's @autotune prune condition, possibly or-ed with more) is true
/// for `config` and a launch with `args` (all of the kernel's params; the key params'
/// values as the tuner sees them: pointers by 16-byte alignment), or "" when it is false
/// or empty. A condition that cannot be evaluated is a reason too.
std::string pruneReason(const KernelInfo &kernel, const ConfigExpr &prune, const Config &config,
                        const Arg *args);

/// Throws tessel::Error naming the kernel, the config and the reason when `prune` rules
/// `config` out for a launch with `args` (as pruneReason); does nothing when it serves.
void checkConfigServes(const KernelInfo &kernel, const ConfigExpr &prune, const Config &config,
                       const Arg *args);

} // namespace tessel

#endif // TESSEL_RUNTIME_KERNELCONFIG_H
