//===- compiler/Compiler.cpp - source to package, in memory ---------------===//
//
// Parse, pick the kernels, check the -D names, resolve each kernel's
// configurations, and compile every configuration into two variants (generic,
// and specialised for divisibility by 16), or one stage of one configuration.
//
//===----------------------------------------------------------------------===//
#include "compiler/Compiler.h"

#include "compiler/KernelRecord.h"
#include "compiler/Ptxas.h"
#include "compiler/VariantCompiler.h"
#include "dialect/Target.h"
#include "frontend/ASTPrinter.h"
#include "frontend/Imports.h"
#include "frontend/Parser.h"
#include "package/Hash.h"

#include "llvm/Config/llvm-config.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <sstream>

namespace tessel::compiler {

namespace fe = tessel::frontend;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

size_t countLines(const std::string &text) {
  return size_t(std::count(text.begin(), text.end(), '\n'));
}

/// The kernels named in the options (every @kernel when none is), or none after an error.
std::vector<const fe::ast::Function *> selectKernels(const fe::ast::Module &module,
                                                     const CompileOptions &options,
                                                     fe::DiagnosticEngine &diags) {
  std::vector<const fe::ast::Function *> kernels;
  if (options.kernels.empty()) {
    for (const auto &fn : module.functions)
      if (fn->kind == fe::ast::FunctionKind::Kernel)
        kernels.push_back(fn.get());
    if (kernels.empty())
      diags.error(fe::SourceRange(), "no @kernel function in the file");
    return kernels;
  }
  for (const std::string &name : options.kernels) {
    const fe::ast::Function *fn = module.function(name);
    if (fn && fn->kind == fe::ast::FunctionKind::Kernel) {
      kernels.push_back(fn);
      continue;
    }
    std::string known;
    for (const auto &f : module.functions)
      if (f->kind == fe::ast::FunctionKind::Kernel)
        known += (known.empty() ? "" : ", ") + f->name;
    diags.error(fe::SourceRange(), "--kernel " + name + ": no such @kernel (the file has: " +
                                       (known.empty() ? "none" : known) + ")");
  }
  return kernels;
}

/// A -D that no selected kernel has as a constexpr is an error (a typo would otherwise
/// compile the defaults silently).
void checkDefinesAreUsed(const std::vector<const fe::ast::Function *> &kernels,
                         const CompileOptions &options, fe::DiagnosticEngine &diags) {
  for (const auto &[name, value] : options.defines) {
    bool used = false;
    for (const fe::ast::Function *k : kernels)
      if (const fe::ast::Param *p = k->param(name); p && p->kind == fe::ast::ParamKind::Constexpr)
        used = true;
    if (!used)
      diags.error(fe::SourceRange(), "-D " + name + ": no compiled kernel has a constexpr "
                                     "parameter named '" + name + "'");
  }
}

/// The kernel's configurations after -D, without those over maxStages (an error when
/// none is left) and, for targets without wgmma, without those that ask for warp
/// specialization: their loops could not specialize, and they would repeat another
/// configuration (the autotuner would time the same code twice).
std::optional<std::vector<fe::Specialization>>
resolveKernelConfigs(const fe::ast::Function &kernel, const CompileOptions &options,
                     fe::DiagnosticEngine &diags,
                     const std::map<std::string, fe::ConstValue> &constants) {
  auto configs = fe::resolveConfigs(kernel, options.defines, options.numWarps, diags, constants);
  if (!configs)
    return configs;
  bool canSpecialize = mlir::tessel::Target(options.arch).hasWgmma();
  bool droppedSpecialized = false;
  configs->erase(std::remove_if(configs->begin(), configs->end(),
                                [&](const fe::Specialization &spec) {
                                  if (spec.warpSpecialize && !canSpecialize)
                                    return droppedSpecialized = true;
                                  return options.maxStages && spec.numStages > options.maxStages;
                                }),
                 configs->end());
  if (configs->empty()) {
    std::string why = options.maxStages ? "--max-stages " + std::to_string(options.maxStages) : "";
    if (droppedSpecialized)
      why += std::string(why.empty() ? "" : " and ") + "--arch " + options.arch +
             " (warp_specialize needs sm_90a)";
    diags.error(kernel.nameRange, why + " leaves no configuration of kernel '" + kernel.name + "'");
    return std::nullopt;
  }
  return configs;
}

/// One stage of the chosen configuration of each kernel, concatenated.
std::string emitStage(const std::vector<const fe::ast::Function *> &kernels,
                      const CompileOptions &options, VariantCompiler &compiler,
                      fe::DiagnosticEngine &diags,
                      const std::map<std::string, fe::ConstValue> &constants) {
  std::string text;
  for (const fe::ast::Function *kernel : kernels) {
    auto configs = resolveKernelConfigs(*kernel, options, diags, constants);
    if (!configs)
      continue;
    if (options.config >= configs->size()) {
      diags.error(kernel->nameRange, "--config " + std::to_string(options.config) +
                                         ": kernel '" + kernel->name + "' has " +
                                         std::to_string(configs->size()) + " configuration(s)");
      continue;
    }
    fe::Specialization spec = (*configs)[options.config];
    if (options.specialize)
      spec.divisibleBy16 = divisibleParams(*kernel, spec);
    VariantOutput v = compiler.compile(*kernel, spec, options.stage);
    if (v.ok)
      text += v.text;
  }
  return text;
}

/// The kernel's package entry: its signature, autotuning data and every variant.
KernelInfo compileKernel(const fe::ast::Function &kernel,
                         const std::vector<fe::Specialization> &configs,
                         const CompileOptions &options, const std::string &ptxas,
                         VariantCompiler &compiler, fe::DiagnosticEngine &diags,
                         std::vector<VariantReport> &report) {
  KernelInfo info = describeKernel(kernel, configs, diags);
  for (size_t c = 0; c < configs.size(); ++c) {
    Config &config = info.configs[c];
    for (int specialised = 0; specialised < 2; ++specialised) {
      Clock::time_point start = Clock::now();
      fe::Specialization spec = configs[c];
      if (specialised)
        spec.divisibleBy16 = divisibleParams(kernel, spec);
      VariantOutput out = compiler.compile(kernel, spec, Stage::Package);
      if (!out.ok)
        break;
      // A specialisation none of whose assumptions the code uses is the generic variant.
      if (specialised && out.divisibleBy16.empty())
        break;
      if (c == 0 && specialised == 0)
        info.params = out.params;
      else if (!(out.params == info.params))
        diags.error(kernel.nameRange, "the configurations of kernel '" + kernel.name +
                                          "' give different runtime signatures");
      Variant v;
      v.sharedBytes = out.sharedBytes;
      v.arch = options.arch;
      v.entry = kernel.name;
      // What the code relies on, which may be fewer than the specialisation assumed.
      v.divisibleBy16 = out.divisibleBy16;
      v.tensorMaps = out.tensorMaps;
      v.producerWarps = out.producerWarps;
      std::string ptxasError;
      if (!ptxas.empty() && !assembleCubin(ptxas, out.ptx, v.arch, v.cubin, ptxasError)) {
        diags.error(kernel.nameRange, "config " + std::to_string(c) + " of '" + kernel.name +
                                          "': " + ptxasError);
        break;
      }
      report.push_back(VariantReport{kernel.name, int(c), specialised != 0, out.sharedBytes,
                                     countLines(out.ptx), msSince(start), out.times});
      v.ptx = std::move(out.ptx);
      v.tesselIR = std::move(out.tesselIR);
      config.addVariant(std::move(v));
    }
  }
  return info;
}

} // namespace

std::string versionText() {
  return std::string("tesselc 0.1.0 (LLVM ") + LLVM_VERSION_STRING + ")";
}

CompileResult compile(std::string_view source, std::string_view fileName,
                      const CompileOptions &options) {
  CompileResult result;
  Clock::time_point start = Clock::now();
  fe::SourceFile file{std::string(fileName), std::string(source)};
  fe::DiagnosticEngine diags(file, options.errorLimit);
  auto finish = [&]() -> CompileResult {
    std::ostringstream rendered;
    diags.flush(rendered);
    diags.printSummary(rendered);
    result.diagnostics = rendered.str();
    result.ok = !diags.hasErrors();
    result.totalMs = msSince(start);
    return std::move(result);
  };
  fe::ImportedFiles imported;
  fe::ast::Module module = fe::parseWithImports(file, diags, imported, options.importDirs);
  if (diags.hasErrors())
    return finish();
  if (options.stage == Stage::AST) {
    result.text = fe::printAST(module, [&](uint32_t f) { return diags.fileAt(f).name(); });
    return finish();
  }
  std::vector<const fe::ast::Function *> kernels = selectKernels(module, options, diags);
  // The module's constants, for @autotune configs and constexpr defaults that name them
  // (their errors are reported where the kernels use them, by MLIRGen).
  fe::DiagnosticEngine quiet(file, 0);
  std::map<std::string, fe::ConstValue> constants = fe::evalModuleConstants(module, quiet);
  if (!diags.hasErrors())
    checkDefinesAreUsed(kernels, options, diags);
  if (diags.hasErrors())
    return finish();

  VariantCompiler compiler(options, diags, module);
  if (options.stage != Stage::Package) {
    result.text = emitStage(kernels, options, compiler, diags, constants);
    return finish();
  }
  result.package.compiler = versionText();
  result.package.source = std::string(fileName);
  // The imported files are part of the source (a variant of the attention kernels changes
  // with flash_attention.tsl).
  std::string hashed = file.text();
  for (const auto &f : imported.files)
    hashed += "\n# import " + std::filesystem::path(f->name()).filename().string() + "\n" + f->text();
  result.package.sourceHash = fnv1aHex(hashed);
  std::string ptxas;
  if (options.cubin && !kernels.empty()) {
    std::string error;
    ptxas = findPtxas(options.ptxas, error);
    if (ptxas.empty()) {
      diags.error(kernels.front()->nameRange, "cannot make machine code (--cubin): " + error);
      return finish();
    }
  }
  for (const fe::ast::Function *kernel : kernels)
    if (auto configs = resolveKernelConfigs(*kernel, options, diags, constants))
      result.package.kernels.push_back(compileKernel(*kernel, *configs, options, ptxas, compiler,
                                                     diags, result.variants));
  return finish();
}

} // namespace tessel::compiler
