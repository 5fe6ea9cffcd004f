//===- test/interpreter/TestUtil.h - parsing and running test kernels ------===//
#ifndef TESSEL_TEST_INTERPRETER_TESTUTIL_H
#define TESSEL_TEST_INTERPRETER_TESTUTIL_H

#include "dialect/TesselDialect.h"
#include "interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
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

// out[i] = x[i] + y[i] for i < n, BLOCK = 128.
inline const char *kVectorAdd = R"mlir(
func.func @add(%x: !tessel.ptr<f32>, %y: !tessel.ptr<f32>, %out: !tessel.ptr<f32>, %n: i32)
    attributes {tessel.kernel} {
  %pid = tessel.program_id 0 : i32
  %c128 = arith.constant 128 : i32
  %start = arith.muli %pid, %c128 : i32
  %r = tessel.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %s = tessel.splat %start : tensor<128xi32>
  %offs = arith.addi %s, %r : tensor<128xi32>
  %ns = tessel.splat %n : tensor<128xi32>
  %mask = arith.cmpi slt, %offs, %ns : tensor<128xi32>
  %xp = tessel.splat %x : tensor<128x!tessel.ptr<f32>>
  %xa = tessel.addptr %xp, %offs : tensor<128x!tessel.ptr<f32>>, tensor<128xi32>
  %yp = tessel.splat %y : tensor<128x!tessel.ptr<f32>>
  %ya = tessel.addptr %yp, %offs : tensor<128x!tessel.ptr<f32>>, tensor<128xi32>
  %op = tessel.splat %out : tensor<128x!tessel.ptr<f32>>
  %oa = tessel.addptr %op, %offs : tensor<128x!tessel.ptr<f32>>, tensor<128xi32>
  %xv = tessel.load %xa, %mask : tensor<128x!tessel.ptr<f32>>
  %yv = tessel.load %ya, %mask : tensor<128x!tessel.ptr<f32>>
  %sum = arith.addf %xv, %yv : tensor<128xf32>
  tessel.store %oa, %sum, %mask : tensor<128x!tessel.ptr<f32>>
  return
}
)mlir";

/// Parses `ir`, in which ops the dialect may not register yet are spelled `"test.NAME"`
/// (generic form), renames them to `tessel.NAME` and compiles the kernel: the interpreter
/// matches those ops by name, and a registered dialect rejects unknown ops when parsing.
inline CompiledKernel compileWithFutureOps(const std::string &ir) {
  mlir::MLIRContext context;
  context.allowUnregisteredDialects();
  loadDialects(context);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(ir, &context);
  EXPECT_TRUE(module) << "cannot parse:\n" << ir;
  if (!module)
    return CompiledKernel();
  llvm::SmallVector<mlir::Operation *> future;
  module->walk([&](mlir::Operation *op) {
    if (op->getName().getStringRef().starts_with("test."))
      future.push_back(op);
  });
  for (mlir::Operation *op : future) {
    mlir::OpBuilder builder(op);
    mlir::OperationState state(op->getLoc(),
                               "tessel." + op->getName().getStringRef().drop_front(5).str());
    state.addOperands(op->getOperands());
    state.addTypes(op->getResultTypes());
    state.addAttributes(op->getAttrs());
    mlir::Operation *renamed = builder.create(state);
    op->replaceAllUsesWith(renamed);
    op->erase();
  }
  llvm::Expected<CompiledKernel> kernel = CompiledKernel::compile(*module);
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError());
    return CompiledKernel();
  }
  return std::move(*kernel);
}

/// Parses `ir` and compiles its kernel; fails the test on errors.
inline CompiledKernel compileTestIR(const std::string &ir) {
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
