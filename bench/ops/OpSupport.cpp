//===- bench/ops/OpSupport.cpp - What every Tessel torch op needs ---------===//

#include "bench/ops/OpSupport.h"
#include "bench/kernels/KernelPackageDir.h"

#ifdef TESSEL_HAVE_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace tessel::ops {

std::string describe(const torch::Tensor &t) {
  if (!t.defined())
    return "an undefined tensor";
  std::ostringstream out;
  out << t.sizes() << " " << t.scalar_type() << " on " << t.device();
  return out.str();
}

void failOp(const std::string &op, const std::string &message) {
  throw std::invalid_argument(op + ": " + message);
}

std::string packageDir(const std::string &op) {
  std::string dir = TESSEL_KERNEL_PACKAGE_DIR;
  if (dir.empty())
    failOp(op, "no kernel packages: this build has no compiler and no TESSEL_PACKAGE_DIR "
               "(see docs/gpu.md)");
  return dir;
}

CUstream currentStream() {
#ifdef TESSEL_HAVE_TORCH_CUDA
  return reinterpret_cast<CUstream>(c10::cuda::getCurrentCUDAStream().stream());
#else
  return nullptr;
#endif
}

std::string packageDType(const std::string &op, torch::ScalarType dtype) {
  switch (dtype) {
  case torch::kFloat32:
    return "f32";
  case torch::kBFloat16:
    return "bf16";
  case torch::kHalf:
    return "f16";
  default: {
    std::ostringstream out;
    out << "dtype must be f32, bf16 or f16; got " << dtype;
    failOp(op, out.str());
  }
  }
}

const TunedKernel &tunedKernel(const std::string &op, const std::string &package,
                               const std::string &kernel, const std::string &prune) {
  static std::mutex mutex;
  static std::map<std::string, TunedKernel> loaded;
  std::string path = packageDir(op) + "/" + package + ".tslpkg";
  std::string key = path + "|" + kernel + "|" + prune;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = loaded.find(key);
  if (it != loaded.end())
    return it->second;
  TuneOptions tuning;
  tuning.prune = prune;
  TunedKernel tuned = TunedKernel::load(Package::load(path), kernel, tuning);
  return loaded.emplace(key, std::move(tuned)).first->second;
}

void requireCudaFloat(const std::string &op,
                      std::initializer_list<const torch::Tensor *> tensors) {
  const torch::Tensor &first = **tensors.begin();
  for (const torch::Tensor *t : tensors) {
    if (!t->defined() || !t->is_cuda() || t->device() != first.device())
      failOp(op, "every tensor must be on one CUDA device; got " + describe(first) + " and " +
                     describe(*t));
    if (!t->is_floating_point())
      failOp(op, "expected a floating-point tensor; got " + describe(*t));
  }
}

} // namespace tessel::ops
