//===- interpreter/Interpreter.h - run tessel kernels on the CPU --*- C++ -*-===//
//
// The CPU interpreter executes a kernel at the tessel-dialect level (after the
// frontend, before layouts) on host memory. CompiledKernel::compile() turns the
// kernel's func.func into a flat list of instructions with resolved operand
// slots once; run() executes every program instance of the grid in turn
// (x fastest, then y, then z), tiles being host arrays.
//
// Every load and store is checked against a MemoryMap (the buffers the kernel
// may touch): an access that its mask does not cover and that falls outside
// every buffer stops the run with the op's source line, the program id and the
// element, instead of reading garbage.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_INTERPRETER_INTERPRETER_H
#define TESSEL_INTERPRETER_INTERPRETER_H

#include "runtime/Args.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessel::interp {

namespace detail {
struct Program;
} // namespace detail

/// One host buffer a kernel may access: [base, base + bytes).
struct Buffer {
  uint64_t base = 0;
  uint64_t bytes = 0;
  std::string name;
};

/// The allocation table of a run: every access must fall inside one buffer.
class MemoryMap {
public:
  /// Registers [base, base + bytes) under `name` (used in messages).
  void add(const void *base, size_t bytes, std::string name = "");
  void clear() { buffers_.clear(); }
  /// The buffer holding all of [address, address + size), or nullptr.
  const Buffer *find(uint64_t address, uint64_t size) const;
  /// Where `address` lies relative to the nearest buffers, for messages:
  /// "4 bytes past the end of buffer 'inp' (4000 bytes at 0x...)".
  std::string describe(uint64_t address, uint64_t size) const;
  const std::vector<Buffer> &buffers() const { return buffers_; }

private:
  std::vector<Buffer> buffers_; // sorted by base
};

/// Program instances per axis.
struct LaunchGrid {
  int64_t x = 1, y = 1, z = 1;
};

/// A kernel prepared for interpretation. Independent of the MLIRContext once
/// compiled; run() is const and may be called from several threads.
class CompiledKernel {
public:
  /// Compiles a kernel function (runtime params only; tiles are tensors, their
  /// layout encodings, if any, are ignored). Fails naming the op and its
  /// location when the kernel uses an op the interpreter does not know.
  static llvm::Expected<CompiledKernel> compile(mlir::func::FuncOp kernel);
  /// The function named `name` of `module`, or its only `tessel.kernel`
  /// function when `name` is empty.
  static llvm::Expected<CompiledKernel> compile(mlir::ModuleOp module,
                                                llvm::StringRef name = "");

  /// Runs every program instance of `grid` with `args` (host pointers for
  /// pointer params). Errors: argument mismatches, out-of-bounds or misaligned
  /// accesses ("file:line:col: error: out-of-bounds load of 4 bytes at 0x...,
  /// element 36 of tensor<64x!tessel.ptr<f32>>: 0 bytes past the end of buffer
  /// 'b' (...) (kernel 'k', program (1, 0, 0))" and the source line when the
  /// file is readable), device assertion failures.
  llvm::Error run(const LaunchGrid &grid, llvm::ArrayRef<Arg> args,
                  const MemoryMap &memory) const;

  /// False for a default-constructed (empty) kernel.
  explicit operator bool() const { return program_ != nullptr; }
  const std::string &name() const;
  size_t numParams() const;
  /// Whether param `index` is a pointer, and its type as MLIR prints it:
  /// "!tessel.ptr<f32>", "i32".
  bool paramIsPointer(size_t index) const;
  const std::string &paramType(size_t index) const;
  /// Number of instructions (for tests).
  size_t numInstructions() const;

private:
  std::shared_ptr<const detail::Program> program_;
};

/// Parses tessel-dialect IR text (.mlir, a package's "tessel_ir") and compiles
/// function `kernel` (or its only `tessel.kernel` function).
llvm::Expected<CompiledKernel> compileIR(llvm::StringRef text, llvm::StringRef kernel = "");

/// Makes the runtime's launches run in this interpreter when interpretation
/// is on (TESSEL_INTERPRET=1 or tessel::setInterpretMode(true), see
/// runtime/Interpret.h). Idempotent.
void installRuntimeHook();

} // namespace tessel::interp

#endif // TESSEL_INTERPRETER_INTERPRETER_H
