//===- bench/model/AdamW.h - AdamW over a list of tensors -------*- C++ -*-===//
//
// AdamW (decoupled weight decay) over any list of f32 parameters, with the
// whole update in one multi-tensor launch (at::_fused_adamw_ or Tessel's
// kernels/adamw.tsl) or in torch::_foreach_* ops. The step counts live in tensors on the parameters'
// device, so the fused step can be captured in a CUDA graph and replayed
// (bias corrections are computed on the device on every replay).
//
// Works on any subset of a model's parameters, e.g. one rank's shard for
// optimizer-state sharding.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_MODEL_ADAMW_H
#define TESSEL_BENCH_MODEL_ADAMW_H

#include <torch/types.h>

#include <string>
#include <vector>

namespace tessel::model {

enum class AdamWImpl {
  Fused,   ///< at::_fused_adamw_: one kernel for all tensors; capturable.
  Foreach, ///< torch::_foreach_* ops (what PyTorch uses by default on CUDA).
  Tessel,  ///< kernels/adamw.tsl through TesselOps::adamw: one launch; capturable.
};

/// "fused" | "foreach" | "tessel"; throws std::invalid_argument otherwise.
AdamWImpl parseAdamWImpl(const std::string &name);
const char *toString(AdamWImpl impl);

struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weightDecay = 0.01;
  AdamWImpl impl = AdamWImpl::Fused;
};

class AdamW {
public:
  /// All parameters must live on one device and be floating point.
  AdamW(std::vector<torch::Tensor> params, AdamWOptions options = {});

  /// One update of every parameter that has a gradient. The state (moments,
  /// step counts) is created on the first call.
  void step();
  /// Drops the gradients (setToNone) or zeroes them in place (the copies' too).
  void zeroGrad(bool setToNone = true);
  /// Pairs parameters with working copies, one entry per parameter in params() order
  /// (undefined: none): a bf16 or f16 copy of an f32 parameter that the model computes
  /// with, e.g. under autocast, instead of casting the parameter on every forward. The
  /// copy's gradient is the parameter's, and every step writes the new value into the copy
  /// too (the parameter stays the f32 master). Gradients then accumulate in the copy's
  /// dtype: with one backward per step this is exactly what autocast computes.
  void setWorkingCopies(std::vector<torch::Tensor> copies);
  const std::vector<torch::Tensor> &workingCopies() const { return copies_; }

  const std::vector<torch::Tensor> &params() const { return params_; }
  const AdamWOptions &options() const { return options_; }
  /// Per-parameter state, in params() order (empty before the first step()).
  const std::vector<torch::Tensor> &expAvg() const { return expAvg_; }
  const std::vector<torch::Tensor> &expAvgSq() const { return expAvgSq_; }

private:
  void initState();
  /// The tensors of the parameters `indices`, as the fused and foreach ops take them.
  struct Tensors {
    std::vector<torch::Tensor> params, grads, expAvg, expAvgSq, steps, copies;
  };
  /// The gradient of parameter i: its working copy's when it has one.
  torch::Tensor gradOf(size_t i) const;
  static void zeroGradOf(torch::Tensor &tensor, bool setToNone);
  /// gradsInParamDtype: a working copy's gradient converted to its parameter's dtype, as
  /// LibTorch's updates take them (Tessel's kernel reads it as it is).
  Tensors gather(const std::vector<size_t> &indices, bool gradsInParamDtype = false) const;
  /// The foreach update of the parameters `group`, whose step count is `step`.
  void foreachStep(const std::vector<size_t> &group, double step);

  std::vector<torch::Tensor> params_, expAvg_, expAvgSq_, steps_, copies_;
  AdamWOptions options_;
  std::vector<int64_t> hostSteps_; // per parameter, host copies for the foreach path
};

} // namespace tessel::model

#endif // TESSEL_BENCH_MODEL_ADAMW_H
