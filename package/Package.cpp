//===- package/Package.cpp - Kernel packages (*.tslpkg) -------------------===//
//
// Reading is two steps: structural (every field present with the right JSON
// type, converted to the structs) and semantic (validate(): names resolve,
// configs are numbered densely and agree across their variants, ...). Both
// report "origin: kernel 'k' variant i: what is wrong" so a broken package is
// diagnosed without opening it.
//
//===----------------------------------------------------------------------===//
#include "package/Package.h"

#include "package/Base64.h"
#include "package/ConfigExpr.h"
#include "package/ConfigLimits.h"
#include "package/FileUtil.h"
#include "package/Hash.h"

#include <algorithm>
#include <cstdio>
#include <set>

using namespace tessel;

std::string ParamInfo::typeName() const {
  std::string name(dtypeName(dtype));
  return isPointer() ? "*" + name : name;
}

//===----------------------------------------------------------------------===//
// KernelInfo
//===----------------------------------------------------------------------===//

Config &KernelInfo::addConfig(Json::Object constexprs, int numWarps, int numStages) {
  Config &config = configs.emplace_back();
  config.index = int(configs.size() - 1);
  config.constexprs = std::move(constexprs);
  config.numWarps = numWarps;
  config.numStages = numStages;
  return config;
}

std::vector<const Variant *> KernelInfo::allVariants() const {
  std::vector<const Variant *> result;
  for (const Config &config : configs)
    for (const Variant &variant : config.variants)
      result.push_back(&variant);
  return result;
}

int KernelInfo::paramIndex(std::string_view paramName) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == paramName)
      return int(i);
  return -1;
}

//===----------------------------------------------------------------------===//
// Config
//===----------------------------------------------------------------------===//

static std::string constexprText(const Json &value) {
  if (value.isString())
    return value.asString();
  return value.dump();
}

std::string Config::text() const {
  std::string text;
  for (const Json::Member &member : constexprs)
    text += member.first + "=" + constexprText(member.second) + " ";
  return text + "num_warps=" + std::to_string(numWarps) +
         " num_stages=" + std::to_string(numStages) + (warpSpecialize ? " warp_specialize" : "");
}

const Json *Config::find(std::string_view name) const {
  for (const Json::Member &member : constexprs)
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
  for (const Json::Member &member : constexprs)
    names += (names.empty() ? "" : ", ") + member.first;
  if (value)
    throw Error("constexpr '" + std::string(name) + "' of config " + std::to_string(index) +
                " is " + value->dump() + ", not an integer");
  throw Error("config " + std::to_string(index) + " (" + text() + ") has no constexpr '" +
              std::string(name) + "' (it has: " + (names.empty() ? "none" : names) + ")");
}

Variant &Config::addVariant(Variant variant) {
  variant.config = index;
  variants.push_back(std::move(variant));
  return variants.back();
}

std::string KernelInfo::signature() const {
  std::string text = name + "(";
  for (size_t i = 0; i < params.size(); ++i) {
    if (i)
      text += ", ";
    text += params[i].name + ": " + params[i].typeName();
  }
  return text + ")";
}

//===----------------------------------------------------------------------===//
// Arch
//===----------------------------------------------------------------------===//

bool tessel::parseArch(std::string_view arch, int &capability, char &suffix) {
  if (arch.substr(0, 3) != "sm_")
    return false;
  arch.remove_prefix(3);
  suffix = '\0';
  if (!arch.empty() && (arch.back() == 'a' || arch.back() == 'f')) {
    suffix = arch.back();
    arch.remove_suffix(1);
  }
  if (arch.size() < 2 || arch.size() > 4)
    return false;
  int value = 0;
  for (char c : arch) {
    if (c < '0' || c > '9')
      return false;
    value = value * 10 + (c - '0');
  }
  capability = value;
  return true;
}

bool tessel::archSupported(std::string_view arch, int capability) {
  int required = 0;
  char suffix = '\0';
  if (!parseArch(arch, required, suffix))
    return false;
  if (suffix == 'a')
    return capability == required;
  if (suffix == 'f')
    return capability / 10 == required / 10 && capability >= required;
  return capability >= required;
}

//===----------------------------------------------------------------------===//
// Structural reading
//===----------------------------------------------------------------------===//

namespace {
/// Reads typed fields of one JSON object; errors carry `where`.
class FieldReader {
public:
  FieldReader(const Json &object, std::string where)
      : object(object), where(std::move(where)) {}

  [[noreturn]] void fail(const std::string &message) const {
    throw Error(where + ": " + message);
  }

  const Json &require(std::string_view name) const {
    const Json *value = object.find(name);
    if (!value)
      fail("missing field '" + std::string(name) + "'");
    return *value;
  }

  [[noreturn]] void wrongType(std::string_view name, const char *expected,
                              const Json &value) const {
    fail("field '" + std::string(name) + "' must be " + expected + ", found " +
         Json::kindName(value.kind()));
  }

  std::string string(std::string_view name) const {
    const Json &value = require(name);
    if (!value.isString())
      wrongType(name, "a string", value);
    return value.asString();
  }

  std::string optionalString(std::string_view name) const {
    return object.find(name) ? string(name) : std::string();
  }

  int64_t integer(std::string_view name, int64_t min, int64_t max) const {
    const Json &value = require(name);
    if (!value.isInt())
      wrongType(name, "an integer", value);
    int64_t result = value.asInt();
    if (result < min || result > max)
      fail("field '" + std::string(name) + "' is " + std::to_string(result) +
           ", expected a value in [" + std::to_string(min) + ", " +
           std::to_string(max) + "]");
    return result;
  }

  bool boolean(std::string_view name) const {
    const Json &value = require(name);
    if (!value.isBool())
      wrongType(name, "true or false", value);
    return value.asBool();
  }

  const Json::Array &array(std::string_view name) const {
    const Json &value = require(name);
    if (!value.isArray())
      wrongType(name, "an array", value);
    return value.asArray();
  }

  std::vector<std::string> stringList(std::string_view name,
                                      bool optional = false) const {
    std::vector<std::string> result;
    if (optional && !object.find(name))
      return result;
    const Json::Array &elements = array(name);
    for (size_t i = 0; i < elements.size(); ++i) {
      if (!elements[i].isString())
        fail("field '" + std::string(name) + "' element " + std::to_string(i) +
             " must be a string, found " + Json::kindName(elements[i].kind()));
      result.push_back(elements[i].asString());
    }
    return result;
  }

  const Json::Object &objectField(std::string_view name) const {
    const Json &value = require(name);
    if (!value.isObject())
      wrongType(name, "an object", value);
    return value.asObject();
  }

private:
  const Json &object;
  std::string where;
};
} // namespace

static std::string kernelWhere(const std::string &origin,
                               const std::string &kernelName, size_t index) {
  if (kernelName.empty())
    return origin + ": kernel " + std::to_string(index);
  return origin + ": kernel '" + kernelName + "'";
}

static ParamInfo readParam(const Json &json, const std::string &where) {
  if (!json.isObject())
    throw Error(where + ": must be an object, found " +
                Json::kindName(json.kind()));
  FieldReader fields(json, where);
  ParamInfo param;
  param.name = fields.string("name");
  FieldReader named(json, where + " '" + param.name + "'");
  std::string kind = named.string("kind");
  if (kind == "pointer")
    param.kind = ParamKind::Pointer;
  else if (kind == "scalar")
    param.kind = ParamKind::Scalar;
  else
    named.fail("field 'kind' is '" + kind + "', expected 'pointer' or 'scalar'");
  std::string dtype = named.string("dtype");
  std::optional<DType> type = parseDType(dtype);
  if (!type)
    named.fail("unknown dtype '" + dtype + "' (expected one of " +
               std::string(dtypeNames()) + ")");
  param.dtype = *type;
  return param;
}

static ParamOrValue readParamOrValue(const FieldReader &fields, const Json &json,
                                     std::string_view name) {
  if (!json.isObject())
    fields.wrongType(name, "an object {\"param\": i} or {\"value\": v}", json);
  FieldReader inner(json, "field '" + std::string(name) + "'");
  ParamOrValue result;
  if (json.find("param"))
    result.param = int(inner.integer("param", 0, 1 << 20));
  else
    result.value = inner.integer("value", 0, int64_t(1) << 62);
  return result;
}

static TensorMapSpec readTensorMap(const Json &json, const std::string &where) {
  if (!json.isObject())
    throw Error(where + ": must be an object, found " + Json::kindName(json.kind()));
  FieldReader fields(json, where);
  TensorMapSpec map;
  map.param = int(fields.integer("param", 0, 1 << 20));
  map.pointer = int(fields.integer("pointer", 0, 1 << 20));
  map.rows = readParamOrValue(fields, fields.require("rows"), "rows");
  map.cols = readParamOrValue(fields, fields.require("cols"), "cols");
  map.rowStride = readParamOrValue(fields, fields.require("row_stride"), "row_stride");
  const Json::Array &box = fields.array("box");
  if (box.size() != 2 || !box[0].isInt() || !box[1].isInt() || box[0].asInt() < 1 ||
      box[0].asInt() > 256 || box[1].asInt() < 1 || box[1].asInt() > 256)
    fields.fail("field 'box' must be [rows, cols] with each in [1, 256]");
  map.boxRows = box[0].asInt();
  map.boxCols = box[1].asInt();
  std::string dtype = fields.string("dtype");
  std::optional<DType> type = parseDType(dtype);
  if (!type || (*type != DType::BF16 && *type != DType::F16 && *type != DType::F32))
    fields.fail("tensor map dtype '" + dtype + "' is not bf16, f16 or f32");
  map.dtype = *type;
  if (json.find("row_order")) {
    std::string order = fields.string("row_order");
    if (order != "interleave8")
      fields.fail("tensor map row_order '" + order + "' is not interleave8");
    if (map.boxRows % 8 != 0)
      fields.fail("an interleave8 tensor map needs a box of a multiple of 8 rows");
    map.interleave8 = true;
  }
  if (json.find("batch_strides")) {
    const Json::Array &strides = fields.array("batch_strides");
    if (strides.empty() || strides.size() > 2)
      fields.fail("field 'batch_strides' must hold 1 or 2 strides");
    for (const Json &stride : strides)
      map.batchStrides.push_back(readParamOrValue(fields, stride, "batch_strides"));
    if (map.interleave8)
      fields.fail("an interleave8 tensor map has no room for batch_strides");
  }
  if (json.find("col_blocks"))
    map.colBlocks = fields.integer("col_blocks", 1, 256);
  if (json.find("multicast")) {
    map.multicast = fields.integer("multicast", 1, 8);
    if ((map.multicast & (map.multicast - 1)) != 0 || map.colBlocks % map.multicast != 0)
      fields.fail("tensor map multicast " + std::to_string(map.multicast) +
                  " must be 1, 2, 4 or 8 and divide col_blocks (" +
                  std::to_string(map.colBlocks) + ")");
  }
  return map;
}

/// A variant as the file stores it: with its configuration's values, which every
/// variant of the configuration repeats (format version 1).
struct StoredVariant {
  Json::Object constexprs;
  int numWarps = 4;
  int numStages = 1;
  bool warpSpecialize = false;
  Variant variant;
};

static StoredVariant readVariant(const Json &json, const std::string &where) {
  if (!json.isObject())
    throw Error(where + ": must be an object, found " +
                Json::kindName(json.kind()));
  FieldReader fields(json, where);
  StoredVariant stored;
  Variant &variant = stored.variant;
  variant.config = int(fields.integer("config", 0, 4095));
  stored.constexprs = fields.objectField("constexprs");
  stored.numWarps = int(fields.integer("num_warps", 1, kMaxNumWarps));
  stored.numStages = int(fields.integer("num_stages", 1, kMaxNumStages));
  if (json.find("warp_specialize"))
    stored.warpSpecialize = fields.boolean("warp_specialize");
  variant.sharedBytes = fields.integer("shared_bytes", 0, int64_t(1) << 40);
  variant.arch = fields.string("arch");
  variant.entry = fields.string("entry");
  variant.divisibleBy16 = fields.stringList("divisible_by_16", true);
  variant.ptx = fields.string("ptx");
  if (json.find("cubin")) {
    std::optional<std::string> cubin = decodeBase64(fields.string("cubin"));
    if (!cubin || cubin->empty())
      throw Error(where + ": field 'cubin' is not base64 machine code");
    variant.cubin = std::move(*cubin);
  }
  variant.tesselIR = fields.optionalString("tessel_ir");
  if (json.find("producer_warps"))
    variant.producerWarps = int(fields.integer("producer_warps", 4, 28));
  if (json.find("tensor_maps")) {
    const Json::Array &maps = fields.array("tensor_maps");
    for (size_t i = 0; i < maps.size(); ++i)
      variant.tensorMaps.push_back(
          readTensorMap(maps[i], where + " tensor map " + std::to_string(i)));
  }
  return stored;
}

/// Gathers the stored variants into their configurations: the first variant of a
/// configuration gives its values, the others must repeat them, and the
/// configurations must be numbered densely from 0.
static void gatherConfigs(KernelInfo &kernel, const Json::Array &variants,
                          const std::string &where) {
  std::vector<bool> seen;
  for (size_t i = 0; i < variants.size(); ++i) {
    std::string vwhere = where + " variant " + std::to_string(i);
    StoredVariant stored = readVariant(variants[i], vwhere);
    size_t index = size_t(stored.variant.config);
    if (index >= kernel.configs.size()) {
      kernel.configs.resize(index + 1);
      seen.resize(index + 1, false);
    }
    Config &config = kernel.configs[index];
    if (!seen[index]) {
      seen[index] = true;
      config.index = int(index);
      config.constexprs = std::move(stored.constexprs);
      config.numWarps = stored.numWarps;
      config.numStages = stored.numStages;
      config.warpSpecialize = stored.warpSpecialize;
    } else if (config.constexprs != stored.constexprs) {
      throw Error(vwhere + ": config " + std::to_string(index) +
                  " has different constexprs than its first variant");
    } else if (config.numWarps != stored.numWarps || config.numStages != stored.numStages ||
               config.warpSpecialize != stored.warpSpecialize) {
      throw Error(vwhere + ": config " + std::to_string(index) +
                  " has different num_warps/num_stages/warp_specialize than its first variant");
    }
    config.addVariant(std::move(stored.variant));
  }
  for (size_t index = 0; index < seen.size(); ++index)
    if (!seen[index])
      throw Error(where + ": config " + std::to_string(index) +
                  " has no variant (configs must be numbered 0.." +
                  std::to_string(seen.size() - 1) + ")");
}

static KernelInfo readKernel(const Json &json, const std::string &origin,
                             size_t index) {
  std::string where = kernelWhere(origin, "", index);
  if (!json.isObject())
    throw Error(where + ": must be an object, found " +
                Json::kindName(json.kind()));
  KernelInfo kernel;
  kernel.name = FieldReader(json, where).string("name");
  where = kernelWhere(origin, kernel.name, index);
  FieldReader fields(json, where);
  const Json::Array &params = fields.array("params");
  for (size_t i = 0; i < params.size(); ++i)
    kernel.params.push_back(
        readParam(params[i], where + " param " + std::to_string(i)));
  kernel.constexprParams = fields.stringList("constexpr_params", true);
  kernel.autotuneKey = fields.stringList("autotune_key", true);
  kernel.autotunePrune = fields.optionalString("autotune_prune");
  kernel.autotuneRestore = fields.stringList("autotune_restore", true);
  gatherConfigs(kernel, fields.array("variants"), where);
  return kernel;
}

Package Package::parse(std::string_view text, std::string_view originName) {
  std::string origin(originName);
  Json root = Json::parse(text, origin);
  if (!root.isObject())
    throw Error(origin + ": not a Tessel package: the document is " +
                Json::kindName(root.kind()) + ", expected an object");
  FieldReader fields(root, origin);
  const Json *format = root.find("format");
  if (!format)
    fields.fail("not a Tessel package: missing field 'format' (expected '" +
                std::string(kFormat) + "')");
  if (!format->isString() || format->asString() != kFormat)
    fields.fail("not a Tessel package: expected format '" +
                std::string(kFormat) + "', found " + format->dump());
  const Json &version = fields.require("version");
  if (!version.isInt())
    fields.wrongType("version", "an integer", version);
  if (version.asInt() != kVersion)
    fields.fail("unsupported package version " +
                std::to_string(version.asInt()) + ": expected version " +
                std::to_string(kVersion) + " (regenerate it with this " +
                "release's tesselc)");

  Package package;
  package.origin = origin;
  package.compiler = fields.optionalString("compiler");
  package.source = fields.optionalString("source");
  package.sourceHash = fields.optionalString("source_hash");
  const Json::Array &kernels = fields.array("kernels");
  for (size_t i = 0; i < kernels.size(); ++i)
    package.kernels.push_back(readKernel(kernels[i], origin, i));
  package.validate();
  return package;
}

Package Package::load(const std::string &path) {
  return parse(readFile(path), path);
}

//===----------------------------------------------------------------------===//
// Semantic validation
//===----------------------------------------------------------------------===//

static bool sameSet(std::vector<std::string> a, std::vector<std::string> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

std::vector<std::string> tessel::pruneNames(const KernelInfo &kernel) {
  std::vector<std::string> names = kernel.constexprParams;
  names.push_back("num_warps");
  names.push_back("num_stages");
  names.push_back("warp_specialize");
  names.insert(names.end(), kernel.autotuneKey.begin(),
               kernel.autotuneKey.end());
  return names;
}

static void validateConfig(const KernelInfo &kernel, const Config &config, int index,
                           const std::string &kernelWhere) {
  std::string where = kernelWhere + " config " + std::to_string(index);
  auto fail = [&](const std::string &message) { throw Error(where + ": " + message); };
  if (config.index != index)
    fail("is numbered " + std::to_string(config.index) + " (configs are numbered by position)");
  if (config.variants.empty())
    fail("has no variant (every config needs its generic variant)");
  // Constexprs: exactly the declared names, scalar values.
  for (const std::string &name : kernel.constexprParams)
    if (!config.find(name))
      fail("missing value for constexpr '" + name + "'");
  for (const Json::Member &member : config.constexprs) {
    if (std::find(kernel.constexprParams.begin(), kernel.constexprParams.end(),
                  member.first) == kernel.constexprParams.end())
      fail("constexprs has '" + member.first + "', which is not in constexpr_params");
    const Json &value = member.second;
    if (!value.isInt() && !value.isBool() && !value.isString() && !value.isDouble())
      fail("constexpr '" + member.first + "' must be a number, boolean "
           "or dtype name, found " + Json::kindName(value.kind()));
  }
  if (!isValidNumWarps(config.numWarps))
    fail("num_warps is " + std::to_string(config.numWarps) +
         ", expected a power of two in [1, " + std::to_string(kMaxNumWarps) + "]");
  if (!isValidNumStages(config.numStages))
    fail("num_stages is " + std::to_string(config.numStages) + ", expected 1 to " +
         std::to_string(kMaxNumStages));
  for (size_t i = 0; i < config.variants.size(); ++i) {
    const Variant &variant = config.variants[i];
    if (variant.config != index)
      fail("its variant " + std::to_string(i) + " says config " + std::to_string(variant.config));
    for (size_t j = 0; j < i; ++j) {
      const Variant &other = config.variants[j];
      if (other.arch == variant.arch && sameSet(other.divisibleBy16, variant.divisibleBy16))
        fail("variants " + std::to_string(j) + " and " + std::to_string(i) +
             " are duplicates (same arch and divisible_by_16)");
    }
  }
}

static void validateVariant(const KernelInfo &kernel, const Variant &variant,
                            const std::string &where) {
  auto fail = [&](const std::string &message) { throw Error(where + ": " + message); };
  if (variant.sharedBytes < 0)
    fail("shared_bytes is negative");
  int capability = 0;
  char suffix = 0;
  if (!parseArch(variant.arch, capability, suffix))
    fail("arch '" + variant.arch + "' is not of the form sm_XY, sm_XYa or sm_XYf");
  if (variant.entry.empty())
    fail("field 'entry' is empty");
  if (variant.ptx.empty())
    fail("field 'ptx' is empty");
  std::set<std::string> assumed;
  for (const std::string &name : variant.divisibleBy16) {
    int param = kernel.paramIndex(name);
    if (param < 0)
      fail("divisible_by_16 names '" + name + "', which is not a runtime param");
    const ParamInfo &info = kernel.params[size_t(param)];
    if (!info.isPointer() && !isIntegerDType(info.dtype))
      fail("divisible_by_16 names '" + name + "' of type " + info.typeName() +
           " (only pointers and integers qualify)");
    if (!assumed.insert(name).second)
      fail("divisible_by_16 lists '" + name + "' twice");
  }
  // Tensor maps follow the kernel's params, in order; what they read are params of
  // the right kinds.
  for (size_t m = 0; m < variant.tensorMaps.size(); ++m) {
    const TensorMapSpec &map = variant.tensorMaps[m];
    std::string which = "tensor map " + std::to_string(m);
    if (map.param != int(kernel.params.size() + m))
      fail(which + " is parameter " + std::to_string(map.param) + ", expected " +
           std::to_string(kernel.params.size() + m) + " (after the kernel's params)");
    auto isParam = [&](int index, bool pointer) {
      return index >= 0 && size_t(index) < kernel.params.size() &&
             kernel.params[size_t(index)].isPointer() == pointer &&
             (pointer || isIntegerDType(kernel.params[size_t(index)].dtype));
    };
    if (!isParam(map.pointer, true))
      fail(which + ": 'pointer' is not a pointer param");
    std::vector<const ParamOrValue *> scalars{&map.rows, &map.cols, &map.rowStride};
    for (const ParamOrValue &stride : map.batchStrides)
      scalars.push_back(&stride);
    for (const ParamOrValue *pv : scalars)
      if (pv->param >= 0 && !isParam(pv->param, false))
        fail(which + ": a bound or stride names param " + std::to_string(pv->param) +
             ", which is not an integer param");
  }
}

static void validateKernel(const KernelInfo &kernel, const std::string &origin,
                           size_t index) {
  std::string where = kernelWhere(origin, kernel.name, index);
  auto fail = [&](const std::string &message) {
    throw Error(where + ": " + message);
  };
  std::set<std::string> names;
  for (const ParamInfo &param : kernel.params) {
    if (param.name.empty())
      fail("a param has an empty name");
    if (!names.insert(param.name).second)
      fail("duplicate param '" + param.name + "'");
  }
  for (const std::string &name : kernel.constexprParams) {
    if (name.empty())
      fail("a constexpr param has an empty name");
    if (!names.insert(name).second)
      fail("constexpr param '" + name + "' duplicates another param name");
  }
  for (const std::string &key : kernel.autotuneKey)
    if (kernel.paramIndex(key) < 0)
      fail("autotune_key names '" + key + "', which is not a runtime param");
  for (const std::string &name : kernel.autotuneRestore) {
    int param = kernel.paramIndex(name);
    if (param < 0 || !kernel.params[size_t(param)].isPointer())
      fail("autotune_restore names '" + name +
           "', which is not a pointer param");
  }
  if (!kernel.autotunePrune.empty()) {
    try {
      ConfigExpr::parse(kernel.autotunePrune)
          .checkNames(pruneNames(kernel), "autotune_prune");
    } catch (const Error &error) {
      fail(error.what());
    }
  }
  if (kernel.configs.empty())
    fail("no variants");
  for (size_t c = 0; c < kernel.configs.size(); ++c)
    validateConfig(kernel, kernel.configs[c], int(c), where);
  std::vector<const Variant *> variants = kernel.allVariants();
  for (size_t i = 0; i < variants.size(); ++i)
    validateVariant(kernel, *variants[i], where + " variant " + std::to_string(i));
}

void Package::validate() const {
  std::string where = origin.empty() ? "<package>" : origin;
  if (kernels.empty())
    throw Error(where + ": the package has no kernels");
  std::set<std::string> names;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (kernels[i].name.empty())
      throw Error(kernelWhere(where, "", i) + ": field 'name' is empty");
    if (!names.insert(kernels[i].name).second)
      throw Error(where + ": duplicate kernel '" + kernels[i].name + "'");
    validateKernel(kernels[i], where, i);
  }
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

static Json stringArray(const std::vector<std::string> &strings) {
  Json result = Json::array();
  for (const std::string &s : strings)
    result.push(s);
  return result;
}

Json Package::toJson() const {
  Json root = Json::object();
  root.set("format", std::string(kFormat));
  root.set("version", kVersion);
  root.set("compiler", compiler);
  root.set("source", source);
  root.set("source_hash", sourceHash);
  Json kernelsJson = Json::array();
  for (const KernelInfo &kernel : kernels) {
    Json k = Json::object();
    k.set("name", kernel.name);
    Json params = Json::array();
    for (const ParamInfo &param : kernel.params) {
      Json p = Json::object();
      p.set("name", param.name);
      p.set("kind", param.isPointer() ? "pointer" : "scalar");
      p.set("dtype", dtypeName(param.dtype));
      params.push(std::move(p));
    }
    k.set("params", std::move(params));
    k.set("constexpr_params", stringArray(kernel.constexprParams));
    k.set("autotune_key", stringArray(kernel.autotuneKey));
    // Optional fields are written only when set, so that packages without
    // them keep their contentHash().
    if (!kernel.autotunePrune.empty())
      k.set("autotune_prune", kernel.autotunePrune);
    if (!kernel.autotuneRestore.empty())
      k.set("autotune_restore", stringArray(kernel.autotuneRestore));
    // Format version 1 stores the variants flat, each with its configuration's values.
    Json variants = Json::array();
    for (const Variant *stored : kernel.allVariants()) {
      const Variant &variant = *stored;
      const Config &config = kernel.configs[size_t(variant.config)];
      Json v = Json::object();
      v.set("config", variant.config);
      v.set("constexprs", Json(config.constexprs));
      v.set("num_warps", config.numWarps);
      v.set("num_stages", config.numStages);
      if (config.warpSpecialize)
        v.set("warp_specialize", true);
      v.set("shared_bytes", variant.sharedBytes);
      v.set("arch", variant.arch);
      v.set("entry", variant.entry);
      v.set("divisible_by_16", stringArray(variant.divisibleBy16));
      v.set("ptx", variant.ptx);
      if (!variant.cubin.empty())
        v.set("cubin", encodeBase64(variant.cubin));
      if (!variant.tesselIR.empty())
        v.set("tessel_ir", variant.tesselIR);
      if (variant.producerWarps)
        v.set("producer_warps", variant.producerWarps);
      if (!variant.tensorMaps.empty()) {
        auto scalar = [](const ParamOrValue &pv) {
          Json j = Json::object();
          if (pv.param >= 0)
            j.set("param", int64_t(pv.param));
          else
            j.set("value", pv.value);
          return j;
        };
        Json maps = Json::array();
        for (const TensorMapSpec &map : variant.tensorMaps) {
          Json m = Json::object();
          m.set("param", int64_t(map.param));
          m.set("pointer", int64_t(map.pointer));
          m.set("rows", scalar(map.rows));
          m.set("cols", scalar(map.cols));
          m.set("row_stride", scalar(map.rowStride));
          Json box = Json::array();
          box.push(map.boxRows);
          box.push(map.boxCols);
          m.set("box", std::move(box));
          m.set("dtype", dtypeName(map.dtype));
          if (!map.batchStrides.empty()) {
            Json strides = Json::array();
            for (const ParamOrValue &stride : map.batchStrides)
              strides.push(scalar(stride));
            m.set("batch_strides", std::move(strides));
          }
          if (map.interleave8)
            m.set("row_order", "interleave8");
          if (map.colBlocks > 1)
            m.set("col_blocks", map.colBlocks);
          if (map.multicast > 1)
            m.set("multicast", map.multicast);
          maps.push(std::move(m));
        }
        v.set("tensor_maps", std::move(maps));
      }
      variants.push(std::move(v));
    }
    k.set("variants", std::move(variants));
    kernelsJson.push(std::move(k));
  }
  root.set("kernels", std::move(kernelsJson));
  return root;
}

std::string Package::serialize() const { return toJson().pretty(); }

void Package::save(const std::string &path) const {
  Package named = *this;
  named.origin = path;
  named.validate();
  writeFileAtomic(path, serialize());
}

//===----------------------------------------------------------------------===//
// Lookup
//===----------------------------------------------------------------------===//

const KernelInfo *Package::findKernel(std::string_view name) const {
  for (const KernelInfo &kernel : kernels)
    if (kernel.name == name)
      return &kernel;
  return nullptr;
}

std::vector<std::string> Package::kernelNames() const {
  std::vector<std::string> names;
  for (const KernelInfo &kernel : kernels)
    names.push_back(kernel.name);
  return names;
}

const KernelInfo &Package::kernel(std::string_view name) const {
  if (const KernelInfo *kernel = findKernel(name))
    return *kernel;
  std::string available;
  for (const KernelInfo &kernel : kernels)
    available += (available.empty() ? "" : ", ") + kernel.name;
  throw Error((origin.empty() ? std::string("<package>") : origin) +
              ": no kernel named '" + std::string(name) +
              "' (available: " + (available.empty() ? "none" : available) +
              ")");
}

std::string Package::contentHash() const {
  return fnv1aHex(toJson().dump());
}
