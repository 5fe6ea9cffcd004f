//===- frontend/MLIRGen.cpp - the kernel function, the module, verification ===//
#include "frontend/MLIRGen.h"
#include "frontend/Gen.h"
#include "frontend/MLIRDiagnostics.h"
#include "dialect/Target.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

namespace tessel::frontend {

using mlir::Type;
using mlir::Value;

void loadMLIRGenDialects(mlir::MLIRContext &context) {
  context.loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect,
                      mlir::math::MathDialect, mlir::scf::SCFDialect,
                      mlir::tessel::TesselDialect>();
}

Generator::Generator(mlir::MLIRContext &context, const ast::Module &module,
                     const Specialization &spec, DiagnosticEngine &diags)
    : ctx(context), b(&context), module(module), spec(spec), diags(diags),
      curLoc_(mlir::UnknownLoc::get(&context)) {}

mlir::Location Generator::loc(SourceRange range) {
  if (!range.isValid())
    return curLoc_;
  return mlir::FileLineColLoc::get(
      mlir::StringAttr::get(&ctx, diags.fileAt(range.begin.file).name()), range.begin.line,
      range.begin.col);
}

Diagnostic &Generator::report(SourceRange range, const std::string &message) {
  Diagnostic &d = diags.error(range, message);
  // Errors inside an inlined @func name the call chain, innermost first.
  for (auto it = callStack.rbegin(); it != callStack.rend(); ++it)
    DiagnosticEngine::note(d, (*it)->callSite,
                           "in '" + (*it)->function->name + "' called from here");
  return d;
}

GenValue Generator::error(SourceRange range, const std::string &message) {
  report(range, message);
  return GenValue::poison();
}

mlir::OwningOpRef<mlir::ModuleOp> Generator::generate(const ast::Function &kernel) {
  unsigned errorsBefore = diags.errorCount();
  mlir::Location kernelLoc = loc(kernel.nameRange);
  mlir::OwningOpRef<mlir::ModuleOp> mod = mlir::ModuleOp::create(kernelLoc);
  mlir::tessel::setNumWarps(*mod, spec.numWarps);
  mlir::tessel::setNumStages(*mod, spec.numStages);

  kernelScope_ = std::make_unique<Scope>();
  Scope &kernelScope = *kernelScope_;
  kernelScope.function = &kernel;
  scope = &kernelScope;

  // Constexpr parameters are compile-time values.
  for (const ast::Param &p : kernel.params) {
    if (p.kind != ast::ParamKind::Constexpr)
      continue;
    const ConstValue *v = spec.lookup(p.name);
    if (!v) {
      error(p.range, "constexpr '" + p.name + "' has no value in this configuration");
      continue;
    }
    kernelScope.vars[p.name] = GenValue::ofConst(*v);
    kernelScope.defs[p.name] = p.range;
  }

  // Runtime parameters, in source order.
  llvm::SmallVector<Type> argTypes;
  llvm::SmallVector<const ast::Param *> runtimeParams;
  for (const ast::Param &p : kernel.params) {
    if (p.kind == ast::ParamKind::Constexpr)
      continue;
    if (p.kind == ast::ParamKind::Untyped) {
      error(p.range, "kernel parameter '" + p.name + "' needs a type (like '*f32', 'i32' or "
                     "'constexpr')");
      continue;
    }
    std::optional<DType> dt = parseDTypeName(p.typeName);
    if (!dt) {
      auto it = kernelScope.vars.find(p.typeName);
      if (it != kernelScope.vars.end() && it->second.isConst() && it->second.cst.isDType()) {
        dt = it->second.cst.dtype;
      } else {
        if (it != kernelScope.vars.end())
          error(p.typeRange, "'" + p.typeName + "' must be a dtype (like bf16) to be used as a "
                             "type, but it is " + describe(it->second));
        else
          error(p.typeRange, "unknown type '" + p.typeName + "'");
        continue;
      }
    }
    Type t = dtypeToType(*dt);
    if (p.kind == ast::ParamKind::Pointer)
      t = mlir::tessel::PtrType::get(&ctx, t);
    argTypes.push_back(t);
    runtimeParams.push_back(&p);
  }
  if (diags.errorCount() != errorsBefore)
    return nullptr;

  b.setInsertionPointToEnd(mod->getBody());
  auto func = mlir::func::FuncOp::create(b, kernelLoc, kernel.name,
                                         b.getFunctionType(argTypes, {}));
  func->setAttr("tessel.kernel", b.getUnitAttr());
  mlir::Block *entry = func.addEntryBlock();
  for (size_t i = 0; i < runtimeParams.size(); ++i) {
    const ast::Param &p = *runtimeParams[i];
    Value arg = entry->getArgument(unsigned(i));
    kernelScope.vars[p.name] = GenValue::ofValue(arg);
    kernelScope.defs[p.name] = p.range;
    bool divisible = spec.divisibleBy16.count(p.name) &&
                     (p.kind == ast::ParamKind::Pointer || isIntElem(argTypes[i]));
    if (divisible)
      func.setArgAttr(unsigned(i), "tessel.divisibility", b.getI32IntegerAttr(16));
  }
  b.setInsertionPointToEnd(entry);
  curLoc_ = kernelLoc;
  genBlock(kernel.body);
  b.setInsertionPointToEnd(entry);
  mlir::func::ReturnOp::create(b, kernelLoc);
  scope = nullptr;
  if (diags.errorCount() != errorsBefore)
    return nullptr;

  // The generated IR must verify; a failure is a compiler bug, reported at the
  // source location of the offending op.
  std::string firstMessage;
  mlir::Location firstLoc = kernelLoc;
  {
    mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
      if (firstMessage.empty()) {
        firstMessage = d.str();
        firstLoc = d.getLocation();
      }
      return mlir::success();
    });
    if (mlir::succeeded(mlir::verify(*mod)))
      return mod;
  }
  SourceRange where = sourceRangeOf(firstLoc, diags).value_or(kernel.nameRange);
  diags.error(where, "internal error: the generated IR does not verify: " + firstMessage);
  return nullptr;
}

mlir::OwningOpRef<mlir::ModuleOp> generateKernel(mlir::MLIRContext &context,
                                                 const ast::Module &module,
                                                 llvm::StringRef kernel,
                                                 const Specialization &spec,
                                                 DiagnosticEngine &diags) {
  loadMLIRGenDialects(context);
  const ast::Function *fn = module.function(kernel.str());
  if (!fn || fn->kind != ast::FunctionKind::Kernel) {
    diags.error(SourceRange(), "no @kernel named '" + kernel.str() + "'");
    return nullptr;
  }
  Generator gen(context, module, spec, diags);
  return gen.generate(*fn);
}

} // namespace tessel::frontend
