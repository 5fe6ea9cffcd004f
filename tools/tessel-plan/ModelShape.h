//===- tools/tessel-plan/ModelShape.h - Model sizes and parameter counts -*- C++ -*-===//
//
// The shapes tessel-plan accounts for: the harness's Transformer LM (the CS336 presets,
// and 10B) and the CS336 accounting question's FFN-only "XXL" stack. No LibTorch: the
// harness's ModelConfig takes its presets from here, and a harness test checks every
// preset's count against the model it builds.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PLAN_MODELSHAPE_H
#define TESSEL_PLAN_MODELSHAPE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel::plan {

enum class Architecture {
  /// The harness's model: embedding, blocks of RMSNorm, attention (fused q/k/v), RMSNorm,
  /// SwiGLU; final RMSNorm; untied LM head; no biases.
  TransformerLM,
  /// Blocks of two linears only, d_model -> d_ff -> d_model (the CS336 XXL question).
  FfnOnly,
};

struct ModelShape {
  std::string name;
  Architecture architecture = Architecture::TransformerLM;
  int64_t vocabSize = 10000, dModel = 0, dFF = 0, numLayers = 0, numHeads = 0;
  /// Key/value heads (grouped-query attention); 0: numHeads (multi-head attention).
  int64_t numKvHeads = 0;

  int64_t kvHeads() const { return numKvHeads > 0 ? numKvHeads : numHeads; }
  /// The width of k (and of v) a token: kv heads times the head dimension (dModel for MHA).
  int64_t kvWidth() const { return numHeads > 0 ? kvHeads() * (dModel / numHeads) : dModel; }

  int64_t blockParameters() const;
  /// Parameters of the linears alone (what bf16 weight copies cover).
  int64_t linearParameters() const;
  int64_t parameters() const;
  /// The FSDP units' parameters in the order the forward gathers them: the embedding, each
  /// block, the final norm and the LM head (FfnOnly: the blocks).
  std::vector<int64_t> unitParameters() const;
  /// The largest FSDP unit (a block, or the embedding or LM head), in parameters.
  int64_t largestUnitParameters() const;
};

/// Every named shape: small, medium, large, xl, 2.7B (the CS336 table), 10B, xxl.
const std::vector<ModelShape> &presets();
std::optional<ModelShape> findPreset(const std::string &name);
/// The names, comma-separated, for messages.
std::string presetNames();

} // namespace tessel::plan

#endif // TESSEL_PLAN_MODELSHAPE_H
