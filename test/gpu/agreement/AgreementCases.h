//===- AgreementCases.h - the same launches for the interpreter and the GPU ---===//
//
// Each case is a package, a kernel, a config, a grid and arguments built from a fixed
// seed, so the CPU interpreter (tessel-agreement-data, built with the compiler) and the
// GPU (AgreementTest, on the GPU machine) run exactly the same launch. The interpreter's
// output is written to <case>.out and carried to the GPU machine.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TEST_GPU_AGREEMENT_AGREEMENTCASES_H
#define TESSEL_TEST_GPU_AGREEMENT_AGREEMENTCASES_H

#include "test/gpu/GpuArrays.h"

#include <string>
#include <vector>

namespace tessel::gputest {

struct AgreementCase {
  std::string name;    ///< file stem of the interpreter's output
  std::string package; ///< <package>.tslpkg
  std::string kernel;
  Storage storage;
  int config;
  int64_t rows, cols; ///< softmax: rows x cols; elementwise: rows = 1, cols = n
  double tolerance;   ///< relative, per element (the GPU's exp is ex2.approx)
};

inline void PrintTo(const AgreementCase &c, std::ostream *os) { *os << c.name; }

inline std::vector<AgreementCase> agreementCases() {
  return {
      {"softmax_f32", "softmax_f32", "softmax", Storage::F32, 1, 5, 1000, 2e-5},
      {"softmax_bf16", "softmax_bf16", "softmax", Storage::BF16, 3, 3, 4099 - 3, 1e-2},
      {"vector_add_f32", "vector_add_f32", "vector_add", Storage::F32, 0, 1, 4099, 0},
      {"silu_mul_bf16", "silu_mul_bf16", "silu_mul", Storage::BF16, 0, 1, 1000, 1e-2},
      {"add_scale_f16", "add_scale_f16", "add_scale", Storage::F16, 0, 1, 4099, 2e-3},
  };
}

/// Deterministic inputs: a 64-bit LCG mapped to [-3, 3).
inline HostArray agreementInput(const AgreementCase &c, uint64_t seed) {
  HostArray array(c.storage, c.rows * c.cols);
  uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t i = 0; i < array.size; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    array.set(i, float((state >> 40) & 0xFFFFFF) / float(1 << 24) * 6.f - 3.f);
  }
  return array;
}

/// The launch of `c` with `pointer(i)` giving buffer i (0: output, 1.., inputs).
template <typename Kernel, typename Pointer>
void launchAgreementCase(const Kernel &kernel, const AgreementCase &c, Pointer pointer) {
  if (c.kernel == "softmax") {
    kernel.launch(Grid(c.rows),
                  {pointer(0), pointer(1), int32_t(c.cols), int32_t(c.cols), int32_t(c.cols)},
                  nullptr, c.config);
  } else if (c.kernel == "add_scale") {
    kernel.launch(Grid((c.cols + 1023) / 1024),
                  {pointer(0), pointer(1), pointer(2), 0.5f, int32_t(c.cols)}, nullptr, c.config);
  } else {
    kernel.launch(Grid((c.cols + 1023) / 1024),
                  {pointer(0), pointer(1), pointer(2), int32_t(c.cols)}, nullptr, c.config);
  }
}

/// Number of input buffers of the case's kernel.
inline int agreementInputs(const AgreementCase &c) { return c.kernel == "softmax" ? 1 : 2; }

} // namespace tessel::gputest

#endif // TESSEL_TEST_GPU_AGREEMENT_AGREEMENTCASES_H
