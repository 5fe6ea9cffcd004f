//===- runtime/KernelConfig.cpp - a kernel's tile configurations ----------===//
#include "runtime/KernelConfig.h"

#include "runtime/ConfigExpr.h"
#include "runtime/Error.h"

#include <utility>
#include <vector>

using namespace tessel;

//===----------------------------------------------------------------------===//
// Config
//===----------------------------------------------------------------------===//

Config::Config(const KernelInfo &kernel, int index)
    : kernel_(kernel.name), index_(index), text_(kernel.describeConfig(index)) {
  for (const Variant &variant : kernel.variants) {
    if (variant.config != index)
      continue;
    numWarps_ = variant.numWarps;
    numStages_ = variant.numStages;
    constexprs_ = variant.constexprs;
    break;
  }
}

const Json *Config::find(std::string_view name) const {
  for (const Json::Member &member : constexprs_)
    if (member.first == name)
      return &member.second;
  return nullptr;
}

int64_t Config::operator[](std::string_view name) const {
  const Json *value = find(name);
  if (value && value->isInt())
    return value->asInt();
  if (value && value->isBool())
    return value->asBool() ? 1 : 0;
  std::string names;
  for (const Json::Member &member : constexprs_)
    names += (names.empty() ? "" : ", ") + member.first;
  if (value)
    throw Error("constexpr '" + std::string(name) + "' of " + kernel_ +
                " is " + value->dump() + ", not an integer");
  throw Error(kernel_ + " has no constexpr '" + std::string(name) +
              "' (it has: " + (names.empty() ? "none" : names) + ")");
}

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
  Json warps(config.numWarps()), stages(config.numStages());
  std::vector<std::pair<std::string, Json>> keys;
  for (const std::string &name : kernel.autotuneKey)
    if (int index = kernel.paramIndex(name); index >= 0)
      keys.emplace_back(name, keyValue(args[size_t(index)]));
  auto lookup = [&](std::string_view name) -> const Json * {
    if (name == "num_warps")
      return &warps;
    if (name == "num_stages")
      return &stages;
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
