//===- bench/model/TesselOps.h - Hooks for Tessel kernels in the model -*- C++ -*-===//
//
// The model calls Tessel's kernels through this table so that the model
// library does not depend on the runtime: whoever wraps a Tessel kernel as a
// torch op (bench/kernels/) installs it here at start-up, e.g.
//
//   tessel::model::tesselOps().attention = &myFlashAttention;
//
// An empty entry means "not built yet": selecting --attention tessel or
// --kernels tessel then fails with a message naming the missing kernel.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_MODEL_TESSELOPS_H
#define TESSEL_BENCH_MODEL_TESSELOPS_H

#include <torch/types.h>

#include <functional>

namespace tessel::model {

struct TesselOps {
  /// Causal attention: q, k, v [batch, heads, seq, dHead] -> [batch, heads, seq, dHead].
  std::function<torch::Tensor(const torch::Tensor &, const torch::Tensor &,
                              const torch::Tensor &)>
      attention;
  /// RMSNorm over the last dimension: (x, weight, eps) -> same shape and dtype as x.
  std::function<torch::Tensor(const torch::Tensor &, const torch::Tensor &, double)> rmsNorm;
  /// SwiGLU gate: (a, b) -> silu(a) * b, same shape.
  std::function<torch::Tensor(const torch::Tensor &, const torch::Tensor &)> swiglu;
};

/// The process-wide table (empty until something registers kernels).
TesselOps &tesselOps();

/// Throws std::runtime_error("... not available yet: needs the <what> kernel")
/// when the entry is empty; used by the model before calling an entry.
void requireTesselOp(bool present, const char *op, const char *kernel);

} // namespace tessel::model

#endif // TESSEL_BENCH_MODEL_TESSELOPS_H
