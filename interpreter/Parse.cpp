//===- interpreter/Parse.cpp - tessel IR text -> interpretable kernel -----===//
#include "interpreter/Interpreter.h"

#include "dialect/TesselDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace tessel::interp {

llvm::Expected<CompiledKernel> compileIR(llvm::StringRef text, llvm::StringRef kernel) {
  mlir::MLIRContext context;
  context.disableMultithreading();
  context.loadDialect<mlir::tessel::TesselDialect, mlir::func::FuncDialect,
                      mlir::arith::ArithDialect, mlir::math::MathDialect,
                      mlir::scf::SCFDialect>();
  std::string errors;
  llvm::raw_string_ostream os(errors);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "tessel_ir"),
                               llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, os);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return llvm::createStringError("cannot parse the tessel IR:\n" + errors);
  return CompiledKernel::compile(*module, kernel);
}

} // namespace tessel::interp
