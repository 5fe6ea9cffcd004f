//===- runtime/KernelConfig.cpp - prune conditions for a launch -----------===//
#include "runtime/KernelConfig.h"

#include "package/ConfigExpr.h"
#include "package/Error.h"

#include <utility>
#include <vector>

using namespace tessel;

//===----------------------------------------------------------------------===//
// Prune conditions
//===----------------------------------------------------------------------===//

/// A key param's value as a prune condition sees it.
static Json keyValue(const Arg &arg) {
  if (arg.isPointer())
    return Json(arg.address() % 16 == 0);
  if (arg.isFloat())
    return Json(arg.floatValue());
  if (arg.kind() == Arg::Kind::Bool)
    return Json(arg.intValue() != 0);
  if (arg.kind() == Arg::Kind::UInt64 && !arg.fitsInt64())
    return Json(double(uint64_t(arg.intValue())));
  return Json(arg.intValue());
}

std::string tessel::pruneReason(const KernelInfo &kernel, const ConfigExpr &prune,
                                const Config &config, const Arg *args) {
  if (prune.empty())
    return {};
  Json warps(config.numWarps), stages(config.numStages), specialized(config.warpSpecialize);
  std::vector<std::pair<std::string, Json>> keys;
  for (const std::string &name : kernel.autotuneKey)
    if (int index = kernel.paramIndex(name); index >= 0)
      keys.emplace_back(name, keyValue(args[size_t(index)]));
  auto lookup = [&](std::string_view name) -> const Json * {
    if (name == "num_warps")
      return &warps;
    if (name == "num_stages")
      return &stages;
    if (name == "warp_specialize")
      return &specialized;
    for (const auto &[keyName, value] : keys)
      if (keyName == name)
        return &value;
    return config.find(name);
  };
  try {
    if (prune.test(lookup))
      return "pruned by '" + prune.text() + "'";
  } catch (const Error &error) {
    return std::string("pruned: ") + error.what();
  }
  return {};
}

void tessel::checkConfigServes(const KernelInfo &kernel, const ConfigExpr &prune,
                               const Config &config, const Arg *args) {
  std::string reason = pruneReason(kernel, prune, config, args);
  if (!reason.empty())
    throw Error(kernel.name + ": config " + std::to_string(config.index) + " (" + config.text() +
                ") cannot serve this launch: " + reason +
                " (the autotuner skips it; launch another config or the TunedKernel)");
}
