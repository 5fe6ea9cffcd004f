//===- compiler/KernelRecord.cpp - a kernel's package record from its source ---===//
#include "compiler/KernelRecord.h"

#include "frontend/ASTPrinter.h"
#include "package/ConfigExpr.h"
#include "package/Error.h"

namespace tessel::compiler {

namespace fe = tessel::frontend;

Json constToJson(const fe::ConstValue &v) {
  switch (v.kind) {
  case fe::ConstValue::Kind::Int: return Json(int64_t(v.intValue));
  case fe::ConstValue::Kind::Float: return Json(v.floatValue);
  case fe::ConstValue::Kind::Bool: return Json(v.intValue != 0);
  case fe::ConstValue::Kind::DType: return Json(std::string(fe::dtypeName(v.dtype)));
  case fe::ConstValue::Kind::String: return Json(v.text);
  case fe::ConstValue::Kind::None: return Json();
  case fe::ConstValue::Kind::Function: return Json(v.text); // a @func passed as a constexpr
  }
  return Json();
}

KernelInfo describeKernel(const fe::ast::Function &kernel,
                          const std::vector<fe::Specialization> &configs,
                          fe::DiagnosticEngine &diags) {
  KernelInfo info;
  info.name = kernel.name;
  for (const fe::ast::Param &p : kernel.params)
    if (p.kind == fe::ast::ParamKind::Constexpr)
      info.constexprParams.push_back(p.name);
  if (kernel.autotune) {
    info.autotuneKey = kernel.autotune->key;
    info.autotuneRestore = kernel.autotune->restore;
    // Evaluated by the runtime at launch, when the key values are known.
    if (kernel.autotune->prune) {
      info.autotunePrune = fe::exprToString(*kernel.autotune->prune);
      // The runtime reads the text back with its own parser: what it cannot read
      // is refused here, at the condition, not at a first launch.
      try {
        ConfigExpr::parse(info.autotunePrune);
      } catch (const Error &error) {
        diags.error(kernel.autotune->prune->range,
                    std::string("the runtime cannot read this prune condition: ") + error.what());
      }
    }
  }
  for (const fe::Specialization &spec : configs) {
    Json constexprs = Json::object();
    for (const auto &[name, value] : spec.constexprs)
      constexprs.set(name, constToJson(value));
    info.addConfig(constexprs.asObject(), int(spec.numWarps), int(spec.numStages))
        .warpSpecialize = spec.warpSpecialize;
  }
  return info;
}

} // namespace tessel::compiler
