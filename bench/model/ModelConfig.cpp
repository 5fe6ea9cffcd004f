//===- bench/model/ModelConfig.cpp - Transformer LM sizes and presets -----===//

#include "bench/model/ModelConfig.h"

#include <sstream>
#include <stdexcept>

namespace tessel::model {

AttentionImpl parseAttentionImpl(const std::string &name) {
  if (name == "naive")
    return AttentionImpl::Naive;
  if (name == "sdpa")
    return AttentionImpl::Sdpa;
  if (name == "tessel")
    return AttentionImpl::Tessel;
  throw std::invalid_argument("unknown attention '" + name + "' (expected naive, sdpa or tessel)");
}

const char *toString(AttentionImpl impl) {
  switch (impl) {
  case AttentionImpl::Naive:
    return "naive";
  case AttentionImpl::Sdpa:
    return "sdpa";
  case AttentionImpl::Tessel:
    return "tessel";
  }
  return "?";
}

KernelImpl parseKernelImpl(const std::string &name) {
  if (name == "eager")
    return KernelImpl::Eager;
  if (name == "tessel")
    return KernelImpl::Tessel;
  throw std::invalid_argument("unknown kernels '" + name + "' (expected eager or tessel)");
}

const char *toString(KernelImpl impl) {
  return impl == KernelImpl::Eager ? "eager" : "tessel";
}

MatmulImpl parseMatmulImpl(const std::string &name) {
  if (name == "torch")
    return MatmulImpl::Torch;
  if (name == "tessel")
    return MatmulImpl::Tessel;
  throw std::invalid_argument("unknown matmul '" + name + "' (expected torch or tessel)");
}

const char *toString(MatmulImpl impl) {
  return impl == MatmulImpl::Torch ? "torch" : "tessel";
}


const std::vector<std::string> &ModelConfig::presetNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> result;
    for (const plan::ModelShape &p : plan::presets())
      if (p.architecture == plan::Architecture::TransformerLM)
        result.push_back(p.name);
    return result;
  }();
  return names;
}

ModelConfig ModelConfig::preset(const std::string &name) {
  std::optional<plan::ModelShape> p = plan::findPreset(name);
  if (!p || p->architecture != plan::Architecture::TransformerLM) {
    std::string known;
    for (const std::string &n : presetNames())
      known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown model preset '" + name + "' (known: " + known + ")");
  }
  ModelConfig config;
  config.name = p->name;
  config.vocabSize = p->vocabSize;
  config.dModel = p->dModel;
  config.dFF = p->dFF;
  config.numLayers = p->numLayers;
  config.numHeads = p->numHeads;
  return config;
}

plan::ModelShape ModelConfig::planShape() const {
  plan::ModelShape s;
  s.name = name;
  s.vocabSize = vocabSize, s.dModel = dModel, s.dFF = dFF;
  s.numLayers = numLayers, s.numHeads = numHeads, s.numKvHeads = numKvHeads;
  return s;
}

int64_t ModelConfig::parameterCount() const { return planShape().parameters(); }

void ModelConfig::validate() const {
  auto require = [&](bool ok, const std::string &what) {
    if (!ok)
      throw std::invalid_argument("bad model config '" + name + "': " + what);
  };
  require(vocabSize > 0 && contextLength > 0 && dModel > 0 && dFF > 0 && numLayers > 0 &&
              numHeads > 0,
          "all sizes must be positive");
  require(dModel % numHeads == 0, "d_model (" + std::to_string(dModel) +
                                      ") must be a multiple of num_heads (" +
                                      std::to_string(numHeads) + ")");
  require(numKvHeads >= 0 && numHeads % kvHeads() == 0,
          "num_heads (" + std::to_string(numHeads) + ") must be a multiple of kv_heads (" +
              std::to_string(kvHeads()) + ")");
  require(attentionWindow >= -1, "the attention window must be -1 (none) or at least 0, got " +
                                     std::to_string(attentionWindow));
  require((dModel / numHeads) % 2 == 0, "the head dimension must be even for RoPE");
  require(ropeTheta > 0 && rmsNormEps > 0, "rope theta and RMSNorm eps must be positive");
}

std::string ModelConfig::describe() const {
  std::ostringstream out;
  out << name << " (d_model " << dModel << ", d_ff " << dFF << ", " << numLayers << " layers, "
      << numHeads << " heads";
  if (kvHeads() != numHeads)
    out << ", " << kvHeads() << " kv heads";
  if (attentionWindow >= 0)
    out << ", window " << attentionWindow;
  out << ", vocab " << vocabSize << ")";
  return out.str();
}

} // namespace tessel::model
