//===- compiler/VariantCompiler.cpp - one kernel variant to PTX ------------===//
#include "compiler/VariantCompiler.h"

#include "dialect/Target.h"

#include "frontend/MLIRDiagnostics.h"
#include "frontend/MLIRGen.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

namespace tessel::compiler {

namespace fe = tessel::frontend;

namespace {

/// The pipeliner's tessel.tensor_maps records, as the package states them.
std::vector<TensorMapSpec> tensorMapsOf(mlir::ModuleOp module) {
  std::vector<TensorMapSpec> maps;
  auto records = module->getAttrOfType<mlir::ArrayAttr>("tessel.tensor_maps");
  if (!records)
    return maps;
  auto integer = [](mlir::DictionaryAttr dict, llvm::StringRef name) {
    return mlir::cast<mlir::IntegerAttr>(dict.get(name)).getInt();
  };
  // {"param": i} or {"value": v}.
  auto paramOrValue = [&](mlir::Attribute attr) {
    auto inner = mlir::cast<mlir::DictionaryAttr>(attr);
    ParamOrValue pv;
    if (inner.get("param"))
      pv.param = int(integer(inner, "param"));
    else
      pv.value = integer(inner, "value");
    return pv;
  };
  auto scalar = [&](mlir::DictionaryAttr dict, llvm::StringRef name) {
    return paramOrValue(dict.get(name));
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
    if (auto strides = dict.getAs<mlir::ArrayAttr>("batch_strides"))
      for (mlir::Attribute stride : strides)
        map.batchStrides.push_back(paramOrValue(stride));
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

/// The names of the parameters -tessel-narrow-divisibility left assumed divisible.
std::vector<std::string> assumedDivisible(mlir::ModuleOp module, const std::string &kernel,
                                          const std::vector<ParamInfo> &params) {
  std::vector<std::string> names;
  auto kept = module->getAttrOfType<mlir::DictionaryAttr>("tessel.divisible_args");
  auto args = kept ? kept.getAs<mlir::DenseI64ArrayAttr>(kernel) : nullptr;
  if (!args)
    return names;
  for (int64_t i : args.asArrayRef())
    if (size_t(i) < params.size())
      names.push_back(params[size_t(i)].name);
  std::sort(names.begin(), names.end()); // as the package lists them
  return names;
}

} // namespace

VariantCompiler::VariantCompiler(const CompileOptions &options, fe::DiagnosticEngine &diags,
                                 const fe::ast::Module &module)
    : options_(options), diags_(diags), module_(module) {
  context_.disableMultithreading();
  fe::loadMLIRGenDialects(context_);
}

VariantOutput VariantCompiler::compile(const fe::ast::Function &kernel,
                                       const fe::Specialization &spec, Stage stage) {
  VariantOutput out;
  auto stageStart = std::chrono::steady_clock::now();
  auto msSinceStageStart = [&stageStart] {
    auto now = std::chrono::steady_clock::now();
    double ms = std::chrono::duration<double, std::milli>(now - stageStart).count();
    stageStart = now;
    return ms;
  };
  fe::SourceDiagnosticHandler handler(&context_, diags_);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      fe::generateKernel(context_, module_, kernel.name, spec, diags_);
  out.times.mlirgenMs = msSinceStageStart();
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
  if (stage == Stage::Tessel) {
    out.text = print(*module);
    out.ok = true;
    return out;
  }
  {
    llvm::raw_string_ostream os(out.tesselIR);
    (*module)->print(os, mlir::OpPrintingFlags().enableDebugInfo());
  }
  // The target decides which tensor-core instructions the lowering may use (wgmma: sm_90a).
  mlir::tessel::Target::set(*module, options_.arch);
  mlir::PassManager pm(&context_);
  mlir::tessel::buildTesselToLLVMPipeline(
      pm, mlir::tessel::LoweringOptions{spec.numWarps, options_.tmaOperands, options_.mmaTmaOperands,
                                        options_.multicastB, options_.asyncDots,
                                        options_.warpSpecialize || spec.warpSpecialize,
                                        options_.warpgroupTurns});
  if (mlir::failed(pm.run(*module))) {
    if (!diags_.hasErrors())
      diags_.error(kernel.nameRange, "lowering of kernel '" + kernel.name + "' failed");
    return out;
  }
  out.times.loweringMs = msSinceStageStart();
  if (auto attr = (*module)->getAttrOfType<mlir::IntegerAttr>("tessel.shared"))
    out.sharedBytes = attr.getInt();
  out.tensorMaps = tensorMapsOf(*module);
  if (auto attr = (*module)->getAttrOfType<mlir::IntegerAttr>("tessel.producer_warps"))
    out.producerWarps = int(attr.getInt());
  out.divisibleBy16 = assumedDivisible(*module, kernel.name, out.params);
  if (stage == Stage::LLVMDialect) {
    out.text = print(*module);
    out.ok = true;
    return out;
  }
  std::string llvmIR;
  mlir::tessel::PTXTimes ptxTimes;
  mlir::FailureOr<std::string> ptx = mlir::tessel::emitPTX(
      *module, mlir::tessel::PTXOptions{options_.arch, 3}, &llvmIR, &ptxTimes);
  out.times.llvmMs = ptxTimes.llvmMs;
  out.times.codegenMs = ptxTimes.codegenMs;
  if (mlir::failed(ptx)) {
    if (!diags_.hasErrors())
      diags_.error(kernel.nameRange, "PTX emission for kernel '" + kernel.name + "' failed");
    return out;
  }
  out.ptx = std::move(*ptx);
  if (stage == Stage::LLVM || stage == Stage::PTX)
    out.text = stage == Stage::LLVM ? llvmIR : out.ptx;
  out.ok = true;
  return out;
}

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

} // namespace tessel::compiler
