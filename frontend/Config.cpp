//===- frontend/Config.cpp - kernel configurations from @autotune, defaults, -D ===//
#include "frontend/Config.h"
#include "package/ConfigLimits.h"

#include <functional>
#include <set>

namespace tessel::frontend {

const ConstValue *Specialization::lookup(const std::string &name) const {
  for (const auto &[key, value] : constexprs)
    if (key == name)
      return &value;
  return nullptr;
}

namespace {

/// The names a generated config's loops bind.
using Bindings = std::map<std::string, ConstValue>;
using Lookup = std::function<std::optional<ConstValue>(const std::string &)>;

/// More would be a typo, not a tuning space (each config is a compile).
constexpr size_t kMaxGeneratedConfigs = 4096;
/// Loop iterations, kept or filtered out, a comprehension may take (`if` filters cost too).
constexpr size_t kMaxExpansionSteps = 1 << 20;

/// The loop names first, then the module's constants.
Lookup boundFirst(const Bindings &bound, const Lookup &constant) {
  return [&bound, &constant](const std::string &name) -> std::optional<ConstValue> {
    auto it = bound.find(name);
    return it != bound.end() ? std::optional<ConstValue>(it->second) : constant(name);
  };
}

/// What a comprehension's `for` runs over: a list or tuple of constants, or range(...).
std::optional<std::vector<ConstValue>> loopValues(const ast::Expr &e, const Lookup &lookup,
                                                  DiagnosticEngine &diags) {
  std::vector<ConstValue> values;
  if (e.kind == ast::ExprKind::List || e.kind == ast::ExprKind::Tuple) {
    for (const ast::ExprPtr &item : e.args) {
      auto v = evalConstExpr(*item, lookup, diags);
      if (!v)
        return std::nullopt;
      values.push_back(*v);
    }
    return values;
  }
  if (e.kind == ast::ExprKind::Call && e.args[0]->kind == ast::ExprKind::Name &&
      e.args[0]->name == "range" && e.args.size() >= 2 && e.args.size() <= 4 &&
      e.keywords.empty()) {
    std::vector<int64_t> bounds;
    for (size_t i = 1; i < e.args.size(); ++i) {
      auto v = evalConstExpr(*e.args[i], lookup, diags);
      if (!v)
        return std::nullopt;
      if (!v->isInt()) {
        diags.error(e.args[i]->range, "range() takes integers; got " + v->toString());
        return std::nullopt;
      }
      bounds.push_back(v->intValue);
    }
    int64_t start = bounds.size() > 1 ? bounds[0] : 0;
    int64_t stop = bounds.size() > 1 ? bounds[1] : bounds[0];
    int64_t step = bounds.size() > 2 ? bounds[2] : 1;
    if (step == 0) {
      diags.error(e.range, "range() step must not be zero");
      return std::nullopt;
    }
    for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
      if (values.size() == kMaxGeneratedConfigs) {
        diags.error(e.range, "a config loop runs over more than " +
                                 std::to_string(kMaxGeneratedConfigs) + " values");
        return std::nullopt;
      }
      values.push_back(ConstValue::ofInt(i));
      if (__builtin_add_overflow(i, step, &i))
        break; // past any stop an int64 can name
    }
    return values;
  }
  diags.error(e.range, "a config loop runs over a list or tuple of constants or range(...)");
  return std::nullopt;
}

/// Expands clauses[i..] of `cfg` (CompFor binds its names for each value, CompIf keeps the
/// configs whose condition holds), appending each config with its bindings to `out`.
bool expandLoops(const std::vector<ast::ExprPtr> &clauses, size_t i, Bindings &bound,
                 const Lookup &constant, DiagnosticEngine &diags,
                 std::vector<std::pair<const ast::AutotuneConfig *, Bindings>> &out,
                 const ast::AutotuneConfig &cfg, size_t &steps) {
  if (++steps > kMaxExpansionSteps) {
    diags.error(cfg.range, "@autotune's comprehension takes more than " +
                               std::to_string(kMaxExpansionSteps) + " steps to expand");
    return false;
  }
  if (i == clauses.size()) {
    if (out.size() == kMaxGeneratedConfigs) {
      diags.error(cfg.range, "@autotune generates more than " +
                                 std::to_string(kMaxGeneratedConfigs) + " configs");
      return false;
    }
    out.emplace_back(&cfg, bound);
    return true;
  }
  Lookup lookup = boundFirst(bound, constant);
  const ast::Expr &clause = *clauses[i];
  if (clause.kind == ast::ExprKind::CompIf) {
    auto keep = evalConstExpr(*clause.args[0], lookup, diags);
    if (!keep)
      return false;
    return !keep->truthy() ||
           expandLoops(clauses, i + 1, bound, constant, diags, out, cfg, steps);
  }
  const ast::Expr &target = *clause.args[0];
  auto values = loopValues(*clause.args[1], lookup, diags);
  if (!values)
    return false;
  if (target.kind == ast::ExprKind::Tuple) {
    diags.error(target.range, "a config loop binds one name (constants do not unpack)");
    return false;
  }
  Bindings saved = bound;
  for (const ConstValue &v : *values) {
    bound[target.name] = v;
    if (!expandLoops(clauses, i + 1, bound, constant, diags, out, cfg, steps))
      return false;
  }
  bound = saved;
  return true;
}

} // namespace

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
  // Each config with the loop names its comprehension binds (none for a written one).
  std::vector<std::pair<const ast::AutotuneConfig *, Bindings>> configs;
  const Lookup constantLookup = constant;
  if (kernel.autotune) {
    size_t steps = 0;
    for (const ast::AutotuneConfig &c : kernel.autotune->configs) {
      Bindings bound;
      if (!expandLoops(c.clauses, 0, bound, constantLookup, diags, configs, c, steps))
        return std::nullopt;
    }
    if (configs.empty()) {
      diags.error(kernel.autotune->range, "@autotune's configs expand to no configuration "
                                          "(every comprehension's loops or conditions are empty)");
      return std::nullopt;
    }
  } else {
    configs.emplace_back(nullptr, Bindings{});
  }

  for (const auto &generated : configs) {
    const ast::AutotuneConfig *cfg = generated.first;
    const Bindings &bound = generated.second;
    Specialization spec;
    spec.numWarps = defaultNumWarps;
    ConstexprValues values;
    SourceRange where = cfg ? cfg->range : kernel.nameRange;
    Lookup lookup = boundFirst(bound, constantLookup);
    if (cfg) {
      for (const ast::Keyword &kw : cfg->values) {
        auto v = evalConstExpr(*kw.value, lookup, diags);
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
      // A generated config's mistake repeats in every expansion: report it once.
      if (!cfg->clauses.empty() && diags.errorCount() != errorsBefore)
        return std::nullopt;
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
