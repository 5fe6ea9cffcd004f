//===- runtime/Package.cpp - Kernel packages (*.tslpkg) -------------------===//
//
// Reading is two steps: structural (every field present with the right JSON
// type, converted to the structs) and semantic (validate(): names resolve,
// configs are numbered densely and agree across their variants, ...). Both
// report "origin: kernel 'k' variant i: what is wrong" so a broken package is
// diagnosed without opening it.
//
//===----------------------------------------------------------------------===//
#include "runtime/Package.h"

#include "runtime/Base64.h"
#include "runtime/ConfigExpr.h"
#include "runtime/ConfigLimits.h"
#include "runtime/FileUtil.h"
#include "runtime/Hash.h"

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

int KernelInfo::configCount() const {
  int count = 0;
  for (const Variant &variant : variants)
    count = std::max(count, variant.config + 1);
  return count;
}

int KernelInfo::paramIndex(std::string_view paramName) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == paramName)
      return int(i);
  return -1;
}

std::vector<int> KernelInfo::variantsOf(int config) const {
  std::vector<int> result;
  for (size_t i = 0; i < variants.size(); ++i)
    if (variants[i].config == config)
      result.push_back(int(i));
  return result;
}

static std::string constexprText(const Json &value) {
  if (value.isString())
    return value.asString();
  return value.dump();
}

std::string KernelInfo::describeConfig(int config) const {
  for (const Variant &variant : variants) {
    if (variant.config != config)
      continue;
    std::string text;
    for (const Json::Member &member : variant.constexprs)
      text += member.first + "=" + constexprText(member.second) + " ";
    text += "num_warps=" + std::to_string(variant.numWarps) +
            " num_stages=" + std::to_string(variant.numStages);
    return text;
  }
  return "config " + std::to_string(config) + " (absent)";
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

static Variant readVariant(const Json &json, const std::string &where) {
  if (!json.isObject())
    throw Error(where + ": must be an object, found " +
                Json::kindName(json.kind()));
  FieldReader fields(json, where);
  Variant variant;
  variant.config = int(fields.integer("config", 0, 4095));
  variant.constexprs = fields.objectField("constexprs");
  variant.numWarps = int(fields.integer("num_warps", 1, kMaxNumWarps));
  variant.numStages = int(fields.integer("num_stages", 1, kMaxNumStages));
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
  if (json.find("tensor_maps")) {
    const Json::Array &maps = fields.array("tensor_maps");
    for (size_t i = 0; i < maps.size(); ++i)
      variant.tensorMaps.push_back(
          readTensorMap(maps[i], where + " tensor map " + std::to_string(i)));
  }
  return variant;
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
  const Json::Array &variants = fields.array("variants");
  for (size_t i = 0; i < variants.size(); ++i)
    kernel.variants.push_back(
        readVariant(variants[i], where + " variant " + std::to_string(i)));
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
  names.insert(names.end(), kernel.autotuneKey.begin(),
               kernel.autotuneKey.end());
  return names;
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
  if (kernel.variants.empty())
    fail("no variants");

  int configs = kernel.configCount();
  std::vector<const Variant *> firstOfConfig(size_t(configs), nullptr);
  for (size_t i = 0; i < kernel.variants.size(); ++i) {
    const Variant &variant = kernel.variants[i];
    std::string vwhere = where + " variant " + std::to_string(i);
    auto vfail = [&](const std::string &message) {
      throw Error(vwhere + ": " + message);
    };
    // Constexprs: exactly the declared names, scalar values.
    for (const std::string &name : kernel.constexprParams) {
      bool found = false;
      for (const Json::Member &member : variant.constexprs)
        found = found || member.first == name;
      if (!found)
        vfail("missing value for constexpr '" + name + "'");
    }
    for (const Json::Member &member : variant.constexprs) {
      if (std::find(kernel.constexprParams.begin(),
                    kernel.constexprParams.end(),
                    member.first) == kernel.constexprParams.end())
        vfail("constexprs has '" + member.first +
              "', which is not in constexpr_params");
      const Json &value = member.second;
      if (!value.isInt() && !value.isBool() && !value.isString() &&
          !value.isDouble())
        vfail("constexpr '" + member.first + "' must be a number, boolean "
              "or dtype name, found " + Json::kindName(value.kind()));
    }
    if (!isValidNumWarps(variant.numWarps))
      vfail("num_warps is " + std::to_string(variant.numWarps) +
            ", expected a power of two in [1, " + std::to_string(kMaxNumWarps) + "]");
    if (!isValidNumStages(variant.numStages))
      vfail("num_stages is " + std::to_string(variant.numStages) + ", expected 1 to " +
            std::to_string(kMaxNumStages));
    if (variant.sharedBytes < 0)
      vfail("shared_bytes is negative");
    int capability = 0;
    char suffix = 0;
    if (!parseArch(variant.arch, capability, suffix))
      vfail("arch '" + variant.arch +
            "' is not of the form sm_XY, sm_XYa or sm_XYf");
    if (variant.entry.empty())
      vfail("field 'entry' is empty");
    if (variant.ptx.empty())
      vfail("field 'ptx' is empty");
    std::set<std::string> assumed;
    for (const std::string &name : variant.divisibleBy16) {
      int param = kernel.paramIndex(name);
      if (param < 0)
        vfail("divisible_by_16 names '" + name +
              "', which is not a runtime param");
      const ParamInfo &info = kernel.params[size_t(param)];
      if (!info.isPointer() && !isIntegerDType(info.dtype))
        vfail("divisible_by_16 names '" + name + "' of type " +
              info.typeName() + " (only pointers and integers qualify)");
      if (!assumed.insert(name).second)
        vfail("divisible_by_16 lists '" + name + "' twice");
    }
    // Tensor maps follow the kernel's params, in order; what they read are params of
    // the right kinds.
    for (size_t m = 0; m < variant.tensorMaps.size(); ++m) {
      const TensorMapSpec &map = variant.tensorMaps[m];
      std::string which = "tensor map " + std::to_string(m);
      if (map.param != int(kernel.params.size() + m))
        vfail(which + " is parameter " + std::to_string(map.param) + ", expected " +
              std::to_string(kernel.params.size() + m) + " (after the kernel's params)");
      auto isParam = [&](int index, bool pointer) {
        return index >= 0 && size_t(index) < kernel.params.size() &&
               kernel.params[size_t(index)].isPointer() == pointer &&
               (pointer || isIntegerDType(kernel.params[size_t(index)].dtype));
      };
      if (!isParam(map.pointer, true))
        vfail(which + ": 'pointer' is not a pointer param");
      for (const ParamOrValue *pv : {&map.rows, &map.cols, &map.rowStride})
        if (pv->param >= 0 && !isParam(pv->param, false))
          vfail(which + ": a bound or stride names param " + std::to_string(pv->param) +
                ", which is not an integer param");
    }
    // Variants of one config are the same tile configuration.
    const Variant *&first = firstOfConfig[size_t(variant.config)];
    if (!first) {
      first = &variant;
      continue;
    }
    if (first->constexprs != variant.constexprs)
      vfail("config " + std::to_string(variant.config) +
            " has different constexprs than its first variant");
    if (first->numWarps != variant.numWarps ||
        first->numStages != variant.numStages)
      vfail("config " + std::to_string(variant.config) +
            " has different num_warps/num_stages than its first variant");
    for (size_t j = 0; j < i; ++j) {
      const Variant &other = kernel.variants[j];
      if (other.config == variant.config && other.arch == variant.arch &&
          sameSet(other.divisibleBy16, variant.divisibleBy16))
        vfail("duplicates variant " + std::to_string(j) +
              " (same config, arch and divisible_by_16)");
    }
  }
  for (int config = 0; config < configs; ++config)
    if (!firstOfConfig[size_t(config)])
      fail("config " + std::to_string(config) +
           " has no variant (configs must be numbered 0.." +
           std::to_string(configs - 1) + ")");
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
    Json variants = Json::array();
    for (const Variant &variant : kernel.variants) {
      Json v = Json::object();
      v.set("config", variant.config);
      v.set("constexprs", Json(variant.constexprs));
      v.set("num_warps", variant.numWarps);
      v.set("num_stages", variant.numStages);
      v.set("shared_bytes", variant.sharedBytes);
      v.set("arch", variant.arch);
      v.set("entry", variant.entry);
      v.set("divisible_by_16", stringArray(variant.divisibleBy16));
      v.set("ptx", variant.ptx);
      if (!variant.cubin.empty())
        v.set("cubin", encodeBase64(variant.cubin));
      if (!variant.tesselIR.empty())
        v.set("tessel_ir", variant.tesselIR);
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
