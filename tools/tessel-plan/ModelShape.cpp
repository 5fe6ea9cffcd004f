//===- tools/tessel-plan/ModelShape.cpp - Model sizes and parameter counts ---===//

#include "tools/tessel-plan/ModelShape.h"

#include <algorithm>

namespace tessel::plan {

int64_t ModelShape::blockParameters() const {
  int64_t ffn = (architecture == Architecture::FfnOnly ? 2 : 3) * dModel * dFF; // W1, W2 (, W3)
  if (architecture == Architecture::FfnOnly)
    return ffn;
  // q and output, k and v (narrower with grouped-query attention); SwiGLU; two RMSNorms.
  return 2 * dModel * dModel + 2 * dModel * kvWidth() + ffn + 2 * dModel;
}

int64_t ModelShape::linearParameters() const {
  if (architecture == Architecture::FfnOnly)
    return parameters();
  return numLayers * (blockParameters() - 2 * dModel) + vocabSize * dModel; // + LM head
}

int64_t ModelShape::parameters() const {
  if (architecture == Architecture::FfnOnly)
    return numLayers * blockParameters();
  // Embedding and untied LM head, the blocks, the final RMSNorm.
  return 2 * vocabSize * dModel + numLayers * blockParameters() + dModel;
}

std::vector<int64_t> ModelShape::unitParameters() const {
  if (architecture == Architecture::FfnOnly)
    return std::vector<int64_t>(numLayers, blockParameters());
  std::vector<int64_t> units = {vocabSize * dModel};
  units.insert(units.end(), numLayers, blockParameters());
  units.push_back(dModel);
  units.push_back(vocabSize * dModel);
  return units;
}

int64_t ModelShape::largestUnitParameters() const {
  std::vector<int64_t> units = unitParameters();
  return units.empty() ? 0 : *std::max_element(units.begin(), units.end());
}

const std::vector<ModelShape> &presets() {
  static const std::vector<ModelShape> shapes = [] {
    auto lm = [](const char *name, int64_t d, int64_t ff, int64_t layers, int64_t heads) {
      ModelShape s;
      s.name = name;
      s.dModel = d, s.dFF = ff, s.numLayers = layers, s.numHeads = heads;
      return s;
    };
    std::vector<ModelShape> all = {
        // The CS336 systems assignment's table.
        lm("small", 768, 3072, 12, 12), lm("medium", 1024, 4096, 24, 16),
        lm("large", 1280, 5120, 36, 20), lm("xl", 1600, 6400, 48, 25),
        lm("2.7B", 2560, 10240, 32, 32),
        // Beyond the table: f32 weights, gradients and AdamW state alone (16 B a parameter,
        // 156 GB) exceed one 141 GB H200, so it trains only sharded over several GPUs.
        lm("10B", 4096, 16384, 36, 32)};
    ModelShape xxl;
    xxl.name = "xxl"; // CS336's accounting question: 126 blocks of two linears, no vocabulary
    xxl.architecture = Architecture::FfnOnly;
    xxl.vocabSize = 0, xxl.dModel = 16384, xxl.dFF = 53248, xxl.numLayers = 126;
    all.push_back(xxl);
    return all;
  }();
  return shapes;
}

std::optional<ModelShape> findPreset(const std::string &name) {
  for (const ModelShape &s : presets())
    if (s.name == name)
      return s;
  return std::nullopt;
}

std::string presetNames() {
  std::string names;
  for (const ModelShape &s : presets())
    names += (names.empty() ? "" : ", ") + s.name;
  return names;
}

} // namespace tessel::plan
