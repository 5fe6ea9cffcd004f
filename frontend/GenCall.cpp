//===- frontend/GenCall.cpp - calls: dispatch, methods, @func inlining ----===//
//
// A call is a @func (inlined), a built-in (GenBuiltins.cpp, found by name), or a
// method: .to(dtype), or a tensor descriptor's .load/.store (GenDescriptor.cpp); anything
// else is an error at the callee.
//
//===----------------------------------------------------------------------===//
#include "frontend/Gen.h"

namespace tessel::frontend {

using ast::Expr;
using ast::ExprKind;
using mlir::Type;
using mlir::Value;

bool Generator::bindArgs(const Expr &call, const std::string &fname,
                         const std::vector<const char *> &names, size_t required,
                         std::vector<const Expr *> &out) {
  out.assign(names.size(), nullptr);
  size_t positional = call.args.size() - 1;
  if (positional > names.size()) {
    error(call.args[names.size() + 1]->range,
          fname + "() takes " +
              (required == names.size() ? "" : "at most ") + std::to_string(names.size()) +
              (names.size() == 1 ? " argument" : " arguments") + " (" +
              std::to_string(positional) + " given)");
    return false;
  }
  for (size_t i = 0; i < positional; ++i)
    out[i] = call.args[i + 1].get();
  for (const ast::Keyword &kw : call.keywords) {
    size_t idx = names.size();
    for (size_t i = 0; i < names.size(); ++i)
      if (kw.name == names[i])
        idx = i;
    if (idx == names.size()) {
      std::string expected;
      for (const char *n : names)
        expected += std::string(expected.empty() ? "" : ", ") + n;
      error(kw.nameRange, fname + "() got an unexpected keyword argument '" + kw.name +
                              "' (parameters: " + expected + ")");
      return false;
    }
    if (out[idx]) {
      error(kw.nameRange, fname + "() got multiple values for argument '" + kw.name + "'");
      return false;
    }
    out[idx] = kw.value.get();
  }
  for (size_t i = 0; i < required; ++i) {
    if (!out[i]) {
      error(call.range, fname + "() missing required argument '" + names[i] + "' (takes " +
                            std::to_string(required) +
                            (required == 1 ? " argument)" : " arguments)"));
      return false;
    }
  }
  return true;
}

const char *Generator::aggregateName(const GenValue &v) {
  return v.isDescriptor() ? "a tensor descriptor" : "a tuple";
}

GenValue Generator::genMethodCall(const Expr &expr) {
  const Expr &attr = *expr.args[0];
  GenValue base = genExpr(*attr.args[0]);
  if (base.isPoison())
    return base;
  if (base.isDescriptor())
    return genDescriptorMethod(expr, base);
  if (attr.name != "to")
    return error(attr.range, "unknown method '" + attr.name + "' (supported: .to(dtype))");
  std::vector<const Expr *> args;
  if (!bindArgs(expr, "to", {"dtype"}, 1, args))
    return GenValue::poison();
  GenValue d = genExpr(*args[0]);
  if (d.isPoison())
    return d;
  if (!d.isConst() || !d.cst.isDType())
    return error(args[0]->range, "to() needs a dtype (like bf16 or a constexpr dtype), got " +
                                     describe(d));
  return genCast(base, d.cst.dtype, expr.range);
}

GenValue Generator::genCall(const Expr &expr) {
  const Expr &callee = *expr.args[0];
  if (callee.kind == ExprKind::Attribute)
    return genMethodCall(expr);
  if (callee.kind != ExprKind::Name)
    return error(callee.range, "only named functions can be called");
  const std::string &name = callee.name;
  // A name bound to a function value (a constexpr parameter, a constant) calls it.
  const GenValue *bound = nullptr;
  if (auto it = scope->vars.find(name); it != scope->vars.end())
    bound = &it->second;
  else if (!module.function(name))
    bound = moduleConstant(name);
  if (bound) {
    if (bound->isPoison())
      return *bound;
    if (bound->isConst() && bound->cst.isFunction())
      if (const ast::Function *fn = module.function(bound->cst.text))
        return callFunc(*fn, expr);
    return error(callee.range, "'" + name + "' is " + describe(*bound) + ", not a function");
  }
  if (const ast::Function *fn = module.function(name)) {
    if (fn->kind == ast::FunctionKind::Kernel)
      return error(callee.range, "cannot call @kernel '" + name +
                                     "' from a kernel; make it a @func helper");
    return callFunc(*fn, expr);
  }
  if (BuiltinHandler handler = findBuiltin(name)) {
    BuiltinCall call{*this, expr, name, curLoc(), {}};
    return (this->*handler)(call);
  }
  for (const char *planned :
       {"reshape", "argmax", "argmin", "device_print", "multiple_of", "max_contiguous"})
    if (name == planned)
      return error(callee.range, "'" + name + "' is not supported yet");
  return error(callee.range, "unknown function '" + name + "'");
}

GenValue Generator::callFunc(const ast::Function &fn, const Expr &call) {
  constexpr size_t kMaxInlineDepth = 32;
  // Every call is inlined: a helper that calls itself (or a chain of helpers calling the
  // next) twice grows exponentially, so the total is bounded too, reported once.
  constexpr size_t kMaxInlinedCalls = 10000;
  if (callStack.size() >= kMaxInlineDepth) {
    if (!inlineDepthReported) // once: a recursive helper reaches the bound on every path
      error(call.range, "@func calls nested more than " + std::to_string(kMaxInlineDepth) +
                            " deep (recursive helper '" + fn.name + "'?)");
    inlineDepthReported = true;
    inlinedCalls = std::max(inlinedCalls, kMaxInlinedCalls + 1); // stop inlining anything
    return GenValue::poison();
  }
  if (++inlinedCalls > kMaxInlinedCalls) {
    if (inlinedCalls == kMaxInlinedCalls + 1)
      error(call.range, "more than " + std::to_string(kMaxInlinedCalls) +
                            " @func calls inlined into this kernel (every call is inlined; '" +
                            fn.name + "' multiplies them: a helper calling itself or the next "
                            "helper more than once grows exponentially)");
    return GenValue::poison();
  }
  std::vector<const char *> names;
  size_t required = 0;
  for (const ast::Param &p : fn.params) {
    names.push_back(p.name.c_str());
    if (!p.defaultValue)
      required = names.size();
  }
  std::vector<const Expr *> args;
  if (!bindArgs(call, fn.name, names, required, args))
    return GenValue::poison();
  Scope callee;
  callee.function = &fn;
  callee.callSite = call.range;
  bool ok = true;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const ast::Param &p = fn.params[i];
    GenValue v;
    SourceRange r = args[i] ? args[i]->range : p.range;
    if (args[i]) {
      v = genExpr(*args[i]);
    } else {
      // A default evaluated in the helper's own scope of earlier parameters.
      Scope *saved = scope;
      scope = &callee;
      v = genExpr(*p.defaultValue);
      scope = saved;
    }
    if (v.isPoison()) {
      ok = false;
      continue;
    }
    switch (p.kind) {
    case ast::ParamKind::Constexpr:
      if (!v.isConst()) {
        Diagnostic &d = report(r, "argument '" + p.name + "' of '" + fn.name +
                                      "' must be a constexpr, but a runtime value (" +
                                      describe(v) + ") was given");
        DiagnosticEngine::note(d, p.range, "parameter declared constexpr here");
        ok = false;
      }
      break;
    case ast::ParamKind::Scalar:
    case ast::ParamKind::Pointer: {
      std::optional<DType> dt = parseDTypeName(p.typeName);
      if (!dt) {
        auto it = callee.vars.find(p.typeName);
        if (it != callee.vars.end() && it->second.isConst() && it->second.cst.isDType())
          dt = it->second.cst.dtype;
      }
      if (!dt) {
        error(p.typeRange, "'" + p.typeName + "' is not a dtype here");
        ok = false;
        break;
      }
      Type want = dtypeToType(*dt);
      if (p.kind == ast::ParamKind::Pointer) {
        want = mlir::tessel::PtrType::get(&ctx, want);
        if (!v.isRuntime() || elemOf(v.type()) != want) {
          error(r, "argument '" + p.name + "' of '" + fn.name + "' must be " +
                       typeName(want) + ", got " + describe(v));
          ok = false;
        }
        break;
      }
      if (v.isConst() && v.cst.isNumber()) {
        v = GenValue::ofValue(constantScalar(v.cst, want));
      } else if (!v.isRuntime() || v.type() != want) {
        error(r, "argument '" + p.name + "' of '" + fn.name + "' must be a " + typeName(want) +
                     " scalar, got " + describe(v));
        ok = false;
      }
      break;
    }
    case ast::ParamKind::Untyped: break;
    }
    callee.vars[p.name] = v;
    callee.defs[p.name] = p.range;
  }
  if (!ok)
    return GenValue::poison();
  Scope *saved = scope;
  scope = &callee;
  callStack.push_back(&callee);
  genBlock(fn.body);
  callStack.pop_back();
  scope = saved;
  if (callee.returnValue)
    return *callee.returnValue;
  return GenValue::ofConst(ConstValue::none());
}

} // namespace tessel::frontend
