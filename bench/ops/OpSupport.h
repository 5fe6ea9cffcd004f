//===- bench/ops/OpSupport.h - What every Tessel torch op needs -*- C++ -*-===//
//
// The pieces the ops in this folder share: loading a package's kernel once per process
// (tuned per key by the runtime), the current CUDA stream, the package folder, and the
// wording of their errors ("<op>: <what is wrong>; got <tensor>").
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_OPS_OPSUPPORT_H
#define TESSEL_BENCH_OPS_OPSUPPORT_H

#include "runtime/Runtime.h"

#include <torch/types.h>

#include <string>

namespace tessel::ops {

/// "[4, 7] BFloat16 on cuda:0", for error messages.
std::string describe(const torch::Tensor &t);

/// Throws std::invalid_argument("<op>: <message>").
[[noreturn]] void failOp(const std::string &op, const std::string &message);

/// Where the kernel packages are (the build's folder); throws naming `op` when there is none.
std::string packageDir(const std::string &op);

/// The stream LibTorch launches on (its current CUDA stream), for Tessel's launches.
CUstream currentStream();

/// "f32", "bf16" or "f16": the suffix of the packages built for a storage dtype; throws
/// naming `op` for any other dtype.
std::string packageDType(const std::string &op, torch::ScalarType dtype);

/// The kernel `kernel` of <packageDir>/<package>.tslpkg, loaded once per process (per
/// prune condition) and shared; launches tune per key as TunedKernel does.
const TunedKernel &tunedKernel(const std::string &op, const std::string &package,
                               const std::string &kernel, const std::string &prune = "");

/// Checks that every tensor is on one CUDA device (the first's) and floating point.
void requireCudaFloat(const std::string &op, std::initializer_list<const torch::Tensor *> tensors);

} // namespace tessel::ops

#endif // TESSEL_BENCH_OPS_OPSUPPORT_H
