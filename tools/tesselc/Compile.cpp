//===- tools/tesselc/Compile.cpp - parse, generate, lower, emit, package ---===//
//
// For each kernel and configuration, two variants (generic, and specialised
// for divisibility by 16) go through MLIRGen, the lowering pipeline and PTX
// emission, and become a package Variant. --emit stops at one stage.
//
//===----------------------------------------------------------------------===//
#include "tools/tesselc/Compile.h"

#include "frontend/ASTPrinter.h"
#include "frontend/Config.h"
#include "frontend/MLIRDiagnostics.h"
#include "frontend/MLIRGen.h"
#include "frontend/Parser.h"
#include "lowering/Passes.h"
#include "runtime/Hash.h"
#include "runtime/Package.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace tessel::tesselc {

namespace fe = tessel::frontend;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

bool readFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

size_t countLines(const std::string &text) {
  size_t n = 0;
  for (char c : text)
    n += c == '\n';
  return n;
}

Json constToJson(const fe::ConstValue &v) {
  switch (v.kind) {
  case fe::ConstValue::Kind::Int: return Json(int64_t(v.intValue));
  case fe::ConstValue::Kind::Float: return Json(v.floatValue);
  case fe::ConstValue::Kind::Bool: return Json(v.intValue != 0);
  case fe::ConstValue::Kind::DType: return Json(std::string(fe::dtypeName(v.dtype)));
  case fe::ConstValue::Kind::String: return Json(v.text);
  case fe::ConstValue::Kind::None: return Json();
  }
  return Json();
}

/// Writes `text` to `path` ("" or "-": stdout).
bool writeOutput(const std::string &path, const std::string &text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    std::cout.flush();
    return true;
  }
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) {
    std::cerr << "tesselc: error: cannot write '" << path << "'\n";
    return false;
  }
  return true;
}

/// The result of compiling one variant up to some stage.
struct VariantOutput {
  bool ok = false;
  /// The printed stage (for --emit).
  std::string text;
  std::string ptx;
  /// The tessel IR before lowering, with source locations: what TESSEL_INTERPRET=1 runs.
  std::string tesselIR;
  int64_t sharedBytes = 0;
  std::vector<ParamInfo> params;
  /// Bulk-copy tensor maps the runtime encodes (parameters after `params`).
  std::vector<TensorMapSpec> tensorMaps;
};

/// The pipeliner's tessel.tensor_maps records, as the package states them.
std::vector<TensorMapSpec> tensorMapsOf(mlir::ModuleOp module) {
  std::vector<TensorMapSpec> maps;
  auto records = module->getAttrOfType<mlir::ArrayAttr>("tessel.tensor_maps");
  if (!records)
    return maps;
  auto integer = [](mlir::DictionaryAttr dict, llvm::StringRef name) {
    return mlir::cast<mlir::IntegerAttr>(dict.get(name)).getInt();
  };
  auto scalar = [&](mlir::DictionaryAttr dict, llvm::StringRef name) {
    auto inner = mlir::cast<mlir::DictionaryAttr>(dict.get(name));
    ParamOrValue pv;
    if (inner.get("param"))
      pv.param = int(integer(inner, "param"));
    else
      pv.value = integer(inner, "value");
    return pv;
  };
  for (mlir::Attribute attr : records) {
    auto dict = mlir::cast<mlir::DictionaryAttr>(attr);
    TensorMapSpec map;
    map.param = int(integer(dict, "param"));
    map.pointer = int(integer(dict, "pointer"));
    map.rows = scalar(dict, "rows");
    map.cols = scalar(dict, "cols");
    map.rowStride = scalar(dict, "row_stride");
    auto box = mlir::cast<mlir::ArrayAttr>(dict.get("box"));
    map.boxRows = mlir::cast<mlir::IntegerAttr>(box[0]).getInt();
    map.boxCols = mlir::cast<mlir::IntegerAttr>(box[1]).getInt();
    // The pipeliner writes bf16, f16 or f32.
    map.dtype = *parseDType(mlir::cast<mlir::StringAttr>(dict.get("dtype")).getValue().str());
    if (auto order = dict.getAs<mlir::StringAttr>("row_order"))
      map.interleave8 = order.getValue() == "interleave8";
    if (auto blocks = dict.getAs<mlir::IntegerAttr>("col_blocks"))
      map.colBlocks = blocks.getInt();
    if (auto ctas = dict.getAs<mlir::IntegerAttr>("multicast"))
      map.multicast = ctas.getInt();
    maps.push_back(map);
  }
  return maps;
}

class Driver {
public:
  Driver(const Options &opts, fe::DiagnosticEngine &diags, const fe::ast::Module &module)
      : opts_(opts), diags_(diags), module_(module) {
    context_.disableMultithreading();
    fe::loadMLIRGenDialects(context_);
  }

  VariantOutput compile(const fe::ast::Function &kernel, const fe::Specialization &spec,
                        Emit stage);

private:
  const Options &opts_;
  fe::DiagnosticEngine &diags_;
  const fe::ast::Module &module_;
  mlir::MLIRContext context_;
};

std::vector<ParamInfo> signatureOf(mlir::ModuleOp module, const fe::ast::Function &kernel) {
  std::vector<ParamInfo> params;
  auto func = module.lookupSymbol<mlir::func::FuncOp>(kernel.name);
  if (!func)
    return params;
  size_t i = 0;
  for (const fe::ast::Param &p : kernel.params) {
    if (p.kind == fe::ast::ParamKind::Constexpr)
      continue;
    if (i >= func.getNumArguments())
      break;
    mlir::Type t = func.getArgument(unsigned(i++)).getType();
    ParamInfo info;
    info.name = p.name;
    if (auto ptr = mlir::dyn_cast<mlir::tessel::PtrType>(t)) {
      info.kind = ParamKind::Pointer;
      t = ptr.getPointeeType();
    }
    std::string name;
    llvm::raw_string_ostream os(name);
    t.print(os);
    if (auto dt = parseDType(name))
      info.dtype = *dt;
    params.push_back(info);
  }
  return params;
}

VariantOutput Driver::compile(const fe::ast::Function &kernel, const fe::Specialization &spec,
                              Emit stage) {
  VariantOutput out;
  fe::SourceDiagnosticHandler handler(&context_, diags_);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      fe::generateKernel(context_, module_, kernel.name, spec, diags_);
  if (!module)
    return out;
  out.params = signatureOf(*module, kernel);
  auto print = [&](mlir::Operation *op) {
    std::string s;
    llvm::raw_string_ostream os(s);
    op->print(os);
    os << "\n";
    return s;
  };
  if (stage == Emit::Tessel) {
    out.text = print(*module);
    out.ok = true;
    return out;
  }
  {
    llvm::raw_string_ostream os(out.tesselIR);
    (*module)->print(os, mlir::OpPrintingFlags().enableDebugInfo());
  }
  // The target decides which tensor-core instructions the lowering may use (wgmma: sm_90a).
  (*module)->setAttr("tessel.arch", mlir::StringAttr::get(&context_, opts_.arch));
  mlir::PassManager pm(&context_);
  mlir::tessel::buildTesselToLLVMPipeline(
      pm, mlir::tessel::LoweringOptions{spec.numWarps, opts_.tmaOperands, opts_.mmaTmaOperands,
                                        opts_.multicastB, opts_.asyncDots});
  if (mlir::failed(pm.run(*module))) {
    if (!diags_.hasErrors())
      diags_.error(kernel.nameRange, "lowering of kernel '" + kernel.name + "' failed");
    return out;
  }
  if (auto attr = (*module)->getAttrOfType<mlir::IntegerAttr>("tessel.shared"))
    out.sharedBytes = attr.getInt();
  out.tensorMaps = tensorMapsOf(*module);
  if (stage == Emit::LLVMDialect) {
    out.text = print(*module);
    out.ok = true;
    return out;
  }
  std::string llvmIR;
  mlir::FailureOr<std::string> ptx =
      mlir::tessel::emitPTX(*module, mlir::tessel::PTXOptions{opts_.arch, 3}, &llvmIR);
  if (mlir::failed(ptx)) {
    if (!diags_.hasErrors())
      diags_.error(kernel.nameRange, "PTX emission for kernel '" + kernel.name + "' failed");
    return out;
  }
  out.ptx = std::move(*ptx);
  out.text = stage == Emit::LLVM ? llvmIR : out.ptx;
  out.ok = true;
  return out;
}

/// Every runtime parameter: pointers (16-byte alignment) and integers (multiple of 16).
std::set<std::string> divisibleParams(const fe::ast::Function &kernel,
                                      const fe::Specialization &spec) {
  std::set<std::string> names;
  for (const fe::ast::Param &p : kernel.params) {
    if (p.kind == fe::ast::ParamKind::Pointer) {
      names.insert(p.name);
    } else if (p.kind == fe::ast::ParamKind::Scalar) {
      auto dt = fe::parseDTypeName(p.typeName);
      if (!dt)
        if (const fe::ConstValue *v = spec.lookup(p.typeName); v && v->isDType())
          dt = v->dtype;
      if (dt && !fe::isFloatDType(*dt) && *dt != fe::DType::I1)
        names.insert(p.name);
    }
  }
  return names;
}

/// The kernel's configurations after -D, without those over --max-stages (an error when
/// none is left).
std::optional<std::vector<fe::Specialization>>
resolveKernelConfigs(const fe::ast::Function &kernel, const Options &opts,
                     fe::DiagnosticEngine &diags) {
  auto configs = fe::resolveConfigs(kernel, opts.defines, opts.numWarps, diags);
  if (!configs || opts.maxStages == 0)
    return configs;
  configs->erase(std::remove_if(configs->begin(), configs->end(),
                                [&](const fe::Specialization &spec) {
                                  return spec.numStages > opts.maxStages;
                                }),
                 configs->end());
  if (configs->empty()) {
    diags.error(kernel.nameRange, "--max-stages " + std::to_string(opts.maxStages) +
                                      " leaves no configuration of kernel '" + kernel.name + "'");
    return std::nullopt;
  }
  return configs;
}

int finish(fe::DiagnosticEngine &diags, int code) {
  diags.flush(std::cerr);
  diags.printSummary(std::cerr);
  return diags.hasErrors() ? 1 : code;
}

} // namespace

int run(const Options &opts) {
  std::string text;
  std::error_code ec;
  if (std::filesystem::is_directory(opts.input, ec)) {
    std::cerr << "tesselc: error: '" << opts.input << "' is a directory, not a .tsl file\n";
    return 1;
  }
  if (!readFile(opts.input, text)) {
    std::cerr << "tesselc: error: cannot read '" << opts.input << "'\n";
    return 1;
  }
  Clock::time_point start = Clock::now();
  fe::SourceFile file(opts.input, std::move(text));
  fe::DiagnosticEngine diags(file, opts.errorLimit);
  fe::ast::Module module = fe::parseModule(file, diags);
  if (diags.hasErrors())
    return finish(diags, 1);
  if (opts.emit == Emit::AST)
    return finish(diags, writeOutput(opts.output, fe::printAST(module)) ? 0 : 1);

  // The kernels to compile.
  std::vector<const fe::ast::Function *> kernels;
  if (opts.kernels.empty()) {
    for (const auto &fn : module.functions)
      if (fn->kind == fe::ast::FunctionKind::Kernel)
        kernels.push_back(fn.get());
    if (kernels.empty()) {
      diags.error(fe::SourceRange(), "no @kernel function in the file");
      return finish(diags, 1);
    }
  } else {
    for (const std::string &name : opts.kernels) {
      const fe::ast::Function *fn = module.function(name);
      if (!fn || fn->kind != fe::ast::FunctionKind::Kernel) {
        std::string known;
        for (const auto &f : module.functions)
          if (f->kind == fe::ast::FunctionKind::Kernel)
            known += (known.empty() ? "" : ", ") + f->name;
        diags.error(fe::SourceRange(), "--kernel " + name + ": no such @kernel (the file has: " +
                                           (known.empty() ? "none" : known) + ")");
        continue;
      }
      kernels.push_back(fn);
    }
    if (diags.hasErrors())
      return finish(diags, 1);
  }
  for (const auto &[name, value] : opts.defines) {
    bool used = false;
    for (const fe::ast::Function *k : kernels)
      if (const fe::ast::Param *p = k->param(name); p && p->kind == fe::ast::ParamKind::Constexpr)
        used = true;
    if (!used)
      diags.error(fe::SourceRange(), "-D " + name + ": no compiled kernel has a constexpr "
                                     "parameter named '" + name + "'");
  }
  if (diags.hasErrors())
    return finish(diags, 1);

  Driver driver(opts, diags, module);

  // --emit of one stage: the chosen configuration (default the first) of each kernel.
  if (opts.emit != Emit::Package) {
    std::string result;
    for (const fe::ast::Function *kernel : kernels) {
      auto configs = resolveKernelConfigs(*kernel, opts, diags);
      if (!configs)
        continue;
      unsigned index = opts.config.value_or(0);
      if (index >= configs->size()) {
        diags.error(kernel->nameRange, "--config " + std::to_string(index) + ": kernel '" +
                                           kernel->name + "' has " +
                                           std::to_string(configs->size()) + " configuration(s)");
        continue;
      }
      fe::Specialization spec = (*configs)[index];
      if (opts.specialize)
        spec.divisibleBy16 = divisibleParams(*kernel, spec);
      VariantOutput v = driver.compile(*kernel, spec, opts.emit);
      if (v.ok)
        result += v.text;
    }
    if (diags.hasErrors())
      return finish(diags, 1);
    return finish(diags, writeOutput(opts.output, result) ? 0 : 1);
  }

  // The package: every kernel, every configuration, two variants each.
  Package package;
  package.compiler = versionText();
  package.source = opts.input;
  package.sourceHash = tessel::fnv1aHex(file.text());
  Json summary = Json::object();
  Json kernelsJson = Json::array();
  std::ostringstream table;
  table << std::left << std::setw(20) << "kernel" << std::setw(8) << "config" << std::setw(13)
        << "variant" << std::setw(7) << "warps" << std::setw(8) << "stages" << std::setw(10)
        << "shared" << std::setw(11) << "ptx lines" << "ms\n";
  double maxConfigMs = 0;
  size_t configCount = 0;
  for (const fe::ast::Function *kernel : kernels) {
    auto configs = resolveKernelConfigs(*kernel, opts, diags);
    if (!configs)
      continue;
    KernelInfo info;
    info.name = kernel->name;
    for (const fe::ast::Param &p : kernel->params)
      if (p.kind == fe::ast::ParamKind::Constexpr)
        info.constexprParams.push_back(p.name);
    if (kernel->autotune) {
      info.autotuneKey = kernel->autotune->key;
      // Evaluated by the runtime at launch, when the key values are known.
      if (kernel->autotune->prune)
        info.autotunePrune = fe::exprToString(*kernel->autotune->prune);
    }
    Json kernelJson = Json::object();
    kernelJson.set("name", kernel->name);
    Json configsJson = Json::array();
    for (size_t c = 0; c < configs->size(); ++c) {
      Clock::time_point configStart = Clock::now();
      Json configJson = Json::object();
      configJson.set("index", int64_t(c));
      Json constexprs = Json::object();
      for (const auto &[name, value] : (*configs)[c].constexprs)
        constexprs.set(name, constToJson(value));
      configJson.set("constexprs", constexprs);
      configJson.set("num_warps", int64_t((*configs)[c].numWarps));
      configJson.set("num_stages", int64_t((*configs)[c].numStages));
      Json variantsJson = Json::array();
      for (int specialised = 0; specialised < 2; ++specialised) {
        Clock::time_point variantStart = Clock::now();
        fe::Specialization spec = (*configs)[c];
        if (specialised)
          spec.divisibleBy16 = divisibleParams(*kernel, spec);
        VariantOutput out = driver.compile(*kernel, spec, Emit::PTX);
        if (!out.ok)
          break;
        if (info.params.empty() && info.variants.empty())
          info.params = out.params;
        else if (!(out.params == info.params))
          diags.error(kernel->nameRange, "the configurations of kernel '" + kernel->name +
                                             "' give different runtime signatures");
        Variant v;
        v.config = int(c);
        v.constexprs = constexprs.asObject();
        v.numWarps = int(spec.numWarps);
        v.numStages = int(spec.numStages);
        v.sharedBytes = out.sharedBytes;
        v.arch = opts.arch;
        v.entry = kernel->name;
        v.divisibleBy16.assign(spec.divisibleBy16.begin(), spec.divisibleBy16.end());
        v.tensorMaps = out.tensorMaps;
        double ms = msSince(variantStart);
        size_t lines = countLines(out.ptx);
        v.ptx = std::move(out.ptx);
        v.tesselIR = std::move(out.tesselIR);
        info.variants.push_back(std::move(v));
        const char *variantName = specialised ? "divisible16" : "generic";
        char msText[32];
        std::snprintf(msText, sizeof(msText), "%.1f", ms);
        table << std::left << std::setw(20) << kernel->name << std::setw(8) << c << std::setw(13)
              << variantName << std::setw(7) << spec.numWarps << std::setw(8) << spec.numStages
              << std::setw(10) << out.sharedBytes << std::setw(11) << lines << msText << "\n";
        Json variantJson = Json::object();
        variantJson.set("variant", variantName);
        Json div = Json::array();
        for (const std::string &n : spec.divisibleBy16)
          div.push(n);
        variantJson.set("divisible_by_16", div);
        variantJson.set("shared_bytes", int64_t(out.sharedBytes));
        variantJson.set("ptx_lines", int64_t(lines));
        variantJson.set("compile_ms", ms);
        variantsJson.push(variantJson);
      }
      double configMs = msSince(configStart);
      maxConfigMs = std::max(maxConfigMs, configMs);
      ++configCount;
      configJson.set("compile_ms", configMs);
      configJson.set("variants", variantsJson);
      configsJson.push(configJson);
    }
    kernelJson.set("configs", configsJson);
    kernelsJson.push(kernelJson);
    package.kernels.push_back(std::move(info));
  }
  if (diags.hasErrors())
    return finish(diags, 1);

  std::string output = opts.output;
  if (output.empty()) {
    output = opts.input;
    size_t dot = output.rfind('.');
    size_t slash = output.rfind('/');
    if (dot != std::string::npos && (slash == std::string::npos || dot > slash))
      output.resize(dot);
    output += ".tslpkg";
  }
  // `-o -`: the package goes to stdout, so the report goes to stderr.
  bool toStdout = output == "-";
  try {
    if (toStdout) {
      package.validate();
      std::cout << package.serialize() << std::flush;
    } else {
      package.save(output);
    }
  } catch (const std::exception &e) {
    diags.error(fe::SourceRange(), std::string("cannot write the package: ") + e.what());
    return finish(diags, 1);
  }
  std::ostream &report = toStdout ? std::cerr : std::cout;
  double totalMs = msSince(start);
  if (opts.quiet) {
  } else if (opts.json) {
    summary.set("input", opts.input);
    summary.set("output", output);
    summary.set("arch", opts.arch);
    summary.set("kernels", kernelsJson);
    summary.set("configurations", int64_t(configCount));
    summary.set("max_config_ms", maxConfigMs);
    summary.set("total_ms", totalMs);
    report << summary.pretty() << "\n";
  } else {
    report << table.str();
    char line[256];
    std::snprintf(line, sizeof(line),
                  "wrote %s: %zu kernel(s), %zu configuration(s), %.0f ms in all, "
                  "slowest configuration %.0f ms\n",
                  toStdout ? "the package to stdout" : output.c_str(), package.kernels.size(),
                  configCount, totalMs, maxConfigMs);
    report << line;
  }
  return finish(diags, 0);
}

} // namespace tessel::tesselc
