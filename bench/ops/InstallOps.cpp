//===- bench/ops/InstallOps.cpp - Tessel's ops into the model's table -----===//

#include "bench/model/TesselOps.h"
#include "bench/ops/FlashAttention.h"
#include "bench/ops/FusedOps.h"

namespace tessel::ops {

void installTesselOps() {
  installFlashAttention();
  model::TesselOps &ops = model::tesselOps();
  ops.rmsNorm = rmsNorm;
  ops.addRmsNorm = addRmsNorm;
  ops.swiglu = swiglu;
  ops.rope = [](const torch::Tensor &qkv, const torch::Tensor &cos, const torch::Tensor &sin,
                int64_t heads, int64_t kvHeads) { return rope(qkv, cos, sin, heads, kvHeads); };
  ops.crossEntropy = crossEntropy;
  ops.linear = linear;
  ops.adamw = [](const auto &params, const auto &grads, const auto &expAvg,
                 const auto &expAvgSq, const auto &steps, const auto &copies, double lr,
                 double beta1, double beta2, double eps, double weightDecay) {
    adamwStep(params, grads, expAvg, expAvgSq, steps, {lr, beta1, beta2, eps, weightDecay},
              copies);
  };
}

} // namespace tessel::ops
