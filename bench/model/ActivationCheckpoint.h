//===- bench/model/ActivationCheckpoint.h - Recompute a part in its backward -*- C++ -*-===//
//
// checkpointed(f, inputs) returns f(inputs) without keeping f's intermediate tensors for
// the backward: only the inputs are saved, and the backward runs f again (under the
// forward's autocast state) and differentiates that, as torch.utils.checkpoint's reentrant
// form does. Gradients reach f's parameters and the inputs that require them. f must be
// deterministic (no dropout here) and return tensors that are not views of its inputs.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_MODEL_ACTIVATIONCHECKPOINT_H
#define TESSEL_BENCH_MODEL_ACTIVATIONCHECKPOINT_H

#include <torch/types.h>

#include <functional>
#include <vector>

namespace tessel::model {

using CheckpointedFn = std::function<std::vector<torch::Tensor>(const std::vector<torch::Tensor> &)>;

/// Undefined inputs are passed through as undefined (a block's first pending output).
std::vector<torch::Tensor> checkpointed(CheckpointedFn f, const std::vector<torch::Tensor> &inputs);

} // namespace tessel::model

#endif // TESSEL_BENCH_MODEL_ACTIVATIONCHECKPOINT_H
