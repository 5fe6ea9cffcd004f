//===- frontend/Config.cpp - kernel configurations from @autotune, defaults, -D ===//
#include "frontend/Config.h"
#include "package/ConfigLimits.h"

#include <set>

namespace tessel::frontend {

const ConstValue *Specialization::lookup(const std::string &name) const {
  for (const auto &[key, value] : constexprs)
    if (key == name)
      return &value;
  return nullptr;
}

std::optional<std::vector<Specialization>>
resolveConfigs(const ast::Function &kernel, const ConstexprValues &overrides,
               unsigned defaultNumWarps, DiagnosticEngine &diags,
               const std::map<std::string, ConstValue> &moduleConstants) {
  unsigned errorsBefore = diags.errorCount();
  auto constant = [&](const std::string &name) -> std::optional<ConstValue> {
    auto it = moduleConstants.find(name);
    return it == moduleConstants.end() ? std::nullopt : std::optional<ConstValue>(it->second);
  };
  // Defaults may refer to earlier constexprs (`BLOCK_N: constexpr = BLOCK_M`).
  auto evalDefaults = [&](ConstexprValues &values) {
    for (const ast::Param &p : kernel.params) {
      if (p.kind != ast::ParamKind::Constexpr)
        continue;
      bool have = false;
      for (const auto &kv : values)
        have |= kv.first == p.name;
      if (have || !p.defaultValue)
        continue;
      auto lookup = [&](const std::string &name) -> std::optional<ConstValue> {
        for (const auto &kv : values)
          if (kv.first == name)
            return kv.second;
        return constant(name);
      };
      if (auto v = evalConstExpr(*p.defaultValue, lookup, diags))
        values.emplace_back(p.name, *v);
    }
  };

  std::vector<Specialization> result;
  std::set<std::string> reportedMissing;
  std::vector<const ast::AutotuneConfig *> configs;
  if (kernel.autotune)
    for (const ast::AutotuneConfig &c : kernel.autotune->configs)
      configs.push_back(&c);
  else
    configs.push_back(nullptr);

  for (const ast::AutotuneConfig *cfg : configs) {
    Specialization spec;
    spec.numWarps = defaultNumWarps;
    ConstexprValues values;
    SourceRange where = cfg ? cfg->range : kernel.nameRange;
    if (cfg) {
      for (const ast::Keyword &kw : cfg->values) {
        auto v = evalConstExpr(*kw.value, constant, diags);
        if (!v)
          continue;
        if (kw.name == "num_warps" || kw.name == "num_stages") {
          bool warps = kw.name == "num_warps";
          if (!v->isInt() || !(warps ? isValidNumWarps(v->intValue)
                                     : isValidNumStages(v->intValue))) {
            diags.error(kw.value->range,
                        warps ? "num_warps must be a power of two from 1 to " +
                                    std::to_string(kMaxNumWarps)
                              : "num_stages must be an integer from 1 to " +
                                    std::to_string(kMaxNumStages));
            continue;
          }
          (warps ? spec.numWarps : spec.numStages) = unsigned(v->intValue);
          continue;
        }
        if (kw.name == "warp_specialize") {
          if (!v->isBool())
            diags.error(kw.value->range, "warp_specialize must be True or False");
          else
            spec.warpSpecialize = v->intValue != 0;
          continue;
        }
        const ast::Param *p = kernel.param(kw.name);
        if (!p || p->kind != ast::ParamKind::Constexpr) {
          diags.error(kw.nameRange, "config sets '" + kw.name + "', which is not a constexpr "
                                    "parameter of '" + kernel.name + "'");
          continue;
        }
        values.emplace_back(kw.name, *v);
      }
    }
    for (const auto &[name, value] : overrides) {
      const ast::Param *p = kernel.param(name);
      if (!p || p->kind != ast::ParamKind::Constexpr)
        continue;
      bool replaced = false;
      for (auto &kv : values)
        if (kv.first == name) {
          kv.second = value;
          replaced = true;
        }
      if (!replaced)
        values.emplace_back(name, value);
    }
    evalDefaults(values);
    // Order as the parameters, and require a value for each.
    for (const ast::Param &p : kernel.params) {
      if (p.kind != ast::ParamKind::Constexpr)
        continue;
      const ConstValue *found = nullptr;
      for (const auto &kv : values)
        if (kv.first == p.name)
          found = &kv.second;
      if (!found) {
        if (!reportedMissing.insert(p.name).second)
          continue;
        Diagnostic &d = diags.error(p.range, "constexpr '" + p.name + "' of kernel '" +
                                                 kernel.name + "' has no value");
        DiagnosticEngine::note(d, where,
                               "give it a default ('" + p.name + ": constexpr = ...'), set it "
                               "in config(...) or pass -D " + p.name + "=VALUE");
        continue;
      }
      spec.constexprs.emplace_back(p.name, *found);
    }
    result.push_back(std::move(spec));
  }
  if (diags.errorCount() != errorsBefore)
    return std::nullopt;
  return result;
}

} // namespace tessel::frontend
