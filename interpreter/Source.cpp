//===- interpreter/Source.cpp - .tsl source -> interpretable kernel -------===//
#include "interpreter/Source.h"

#include "compiler/KernelRecord.h"
#include "frontend/Config.h"
#include "frontend/MLIRDiagnostics.h"
#include "frontend/MLIRGen.h"
#include "frontend/Imports.h"
#include "frontend/Parser.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "package/ConfigExpr.h"
#include "package/Error.h"
#include "runtime/KernelConfig.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace fe = tessel::frontend;

namespace tessel::interp {

static std::string rendered(const fe::DiagnosticEngine &diags) {
  std::string out;
  for (const fe::Diagnostic &d : diags.diagnostics())
    out += diags.render(d);
  while (!out.empty() && out.back() == '\n')
    out.pop_back();
  return out;
}

llvm::Expected<SourceKernel> compileSource(const std::string &path, const std::string &text,
                                           const SourceOptions &opts) {
  fe::SourceFile file(path, text);
  fe::DiagnosticEngine diags(file);
  fe::ImportedFiles imported;
  fe::ast::Module module = fe::parseWithImports(file, diags, imported, opts.importDirs);
  if (diags.hasErrors())
    return llvm::createStringError(rendered(diags));
  const fe::ast::Function *kernel = nullptr;
  std::string names;
  for (const auto &fn : module.functions) {
    if (fn->kind != fe::ast::FunctionKind::Kernel)
      continue;
    names += (names.empty() ? "" : ", ") + fn->name;
    if (opts.kernel.empty() ? !kernel : fn->name == opts.kernel)
      kernel = fn.get();
  }
  if (!kernel || (opts.kernel.empty() && names.find(',') != std::string::npos))
    return llvm::createStringError(
        path + ": " + (opts.kernel.empty() ? "name the kernel to run" : "no @kernel '" + opts.kernel + "'") +
        " (the file has: " + (names.empty() ? "none" : names) + ")");

  fe::ConstexprValues overrides;
  for (const std::string &d : opts.defines) {
    size_t eq = d.find('=');
    std::optional<fe::ConstValue> value;
    if (eq != std::string::npos)
      value = fe::parseConstValue(std::string_view(d).substr(eq + 1));
    if (!value)
      return llvm::createStringError("-D expects NAME=VALUE (an int, float, bool or dtype), got '" +
                                     d + "'");
    overrides.emplace_back(d.substr(0, eq), *value);
  }
  // Module constants for configs and defaults (errors: MLIRGen's, where they are used).
  fe::DiagnosticEngine quiet(file, 0);
  auto configs =
      fe::resolveConfigs(*kernel, overrides, 4, diags, fe::evalModuleConstants(module, quiet));
  if (!configs || diags.hasErrors())
    return llvm::createStringError(rendered(diags));
  if (opts.config >= configs->size())
    return llvm::createStringError("configuration " + std::to_string(opts.config) + ": kernel '" +
                                   kernel->name + "' has " + std::to_string(configs->size()));
  const fe::Specialization &spec = (*configs)[opts.config];

  mlir::MLIRContext context;
  context.disableMultithreading();
  fe::loadMLIRGenDialects(context);
  mlir::OwningOpRef<mlir::ModuleOp> ir;
  {
    fe::SourceDiagnosticHandler handler(&context, diags);
    ir = fe::generateKernel(context, module, kernel->name, spec, diags);
  }
  if (!ir)
    return llvm::createStringError(rendered(diags));
  llvm::Expected<CompiledKernel> compiled = CompiledKernel::compile(*ir, kernel->name);
  if (!compiled)
    return compiled.takeError();
  SourceKernel result;
  result.kernel = std::move(*compiled);
  llvm::raw_string_ostream os(result.ir);
  ir->print(os, mlir::OpPrintingFlags().enableDebugInfo());
  for (const fe::ast::Param &p : kernel->params)
    if (p.kind != fe::ast::ParamKind::Constexpr)
      result.paramNames.push_back(p.name);
  result.record = compiler::describeKernel(*kernel, *configs, diags);
  if (diags.hasErrors())
    return llvm::createStringError(rendered(diags));
  for (size_t i = 0; i < result.paramNames.size(); ++i) {
    ParamInfo param;
    param.name = result.paramNames[i];
    param.kind = result.kernel.paramIsPointer(i) ? ParamKind::Pointer : ParamKind::Scalar;
    result.record.params.push_back(param);
  }
  result.config = opts.config;
  for (const auto &[name, value] : spec.constexprs)
    result.configText += (result.configText.empty() ? "" : " ") + name + "=" + value.toString();
  return result;
}

llvm::Error SourceKernel::checkServes(llvm::ArrayRef<Arg> args) const {
  if (record.autotunePrune.empty())
    return llvm::Error::success();
  if (args.size() != record.params.size())
    return llvm::createStringError(record.name + ": " + std::to_string(args.size()) +
                                   " arguments for " + std::to_string(record.params.size()) +
                                   " parameters");
  try {
    checkConfigServes(record, ConfigExpr::parse(record.autotunePrune), record.configs.at(config),
                      args.data());
  } catch (const Error &error) {
    return llvm::createStringError(error.what());
  }
  return llvm::Error::success();
}

llvm::Expected<SourceKernel> compileSourceFile(const std::string &path, const SourceOptions &opts) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError("cannot read '" + path + "': " + buffer.getError().message());
  return compileSource(path, (*buffer)->getBuffer().str(), opts);
}

} // namespace tessel::interp
