//===- test/interpreter/TestUtil.h - parsing and running test kernels ------===//
#ifndef TESSEL_TEST_INTERPRETER_TESTUTIL_H
#define TESSEL_TEST_INTERPRETER_TESTUTIL_H

#include "dialect/TesselDialect.h"
#include "interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

namespace tessel::interp::test {

inline void loadDialects(mlir::MLIRContext &context) {
  context.loadDialect<mlir::tessel::TesselDialect, mlir::func::FuncDialect,
                      mlir::arith::ArithDialect, mlir::math::MathDialect,
                      mlir::scf::SCFDialect>();
}

/// Parses `ir` and compiles its kernel; fails the test on errors.
inline CompiledKernel compileIR(const std::string &ir) {
  mlir::MLIRContext context;
  loadDialects(context);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(ir, &context);
  EXPECT_TRUE(module) << "cannot parse:\n" << ir;
  if (!module)
    return CompiledKernel();
  llvm::Expected<CompiledKernel> kernel = CompiledKernel::compile(*module);
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError());
    return CompiledKernel();
  }
  return std::move(*kernel);
}

/// The error of a run as text ("" on success).
inline std::string runError(const CompiledKernel &kernel, LaunchGrid grid,
                            std::initializer_list<Arg> args, const MemoryMap &memory) {
  llvm::Error e = kernel.run(grid, llvm::ArrayRef<Arg>(args.begin(), args.size()), memory);
  return e ? llvm::toString(std::move(e)) : std::string();
}

} // namespace tessel::interp::test

#endif // TESSEL_TEST_INTERPRETER_TESTUTIL_H
