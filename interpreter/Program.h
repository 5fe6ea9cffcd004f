//===- interpreter/Program.h - the interpreter's instruction list -*- C++ -*-===//
//
// Internal to the interpreter. Every SSA value of the kernel owns a slot: a
// statically sized host array in one of three arenas (float for f16/bf16/f32,
// double for f64, int64 for integers, i1 and pointers). Integers are kept
// sign-extended from their width (i1 true is -1); f16/bf16 values are floats
// that are exactly representable in their type (every result is rounded to
// nearest even). Instructions name their operand slots directly. expand_dims and
// convert_layout results are views: slots sharing their operand's storage.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_INTERPRETER_PROGRAM_H
#define TESSEL_INTERPRETER_PROGRAM_H

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::interp::detail {

enum class Elem : uint8_t { Int, F16, BF16, F32, F64, Ptr };
enum class Store : uint8_t { F32, F64, I64 };

inline Store storeOf(Elem e) {
  switch (e) {
  case Elem::F16:
  case Elem::BF16:
  case Elem::F32:
    return Store::F32;
  case Elem::F64:
    return Store::F64;
  default:
    return Store::I64;
  }
}

struct Slot {
  Elem elem = Elem::Int;
  Store store = Store::I64;
  /// Integer width (1..64); pointee byte size for pointers.
  uint8_t bits = 64;
  uint32_t offset = 0;
  uint32_t size = 1;
  llvm::SmallVector<int64_t, 4> shape;
  /// For pointers: the pointee (Elem::Int with `pointeeBits`, or a float).
  Elem pointee = Elem::Int;
  uint8_t pointeeBits = 0;
  /// The MLIR type as printed, for messages.
  std::string typeName;
};

enum class Opcode : uint16_t {
  // Program coordinates.
  ProgramId, NumPrograms,
  // Shape.
  Splat, Broadcast, Trans,
  // Memory.
  AddPtr, Load, Store,
  Reduce, Dot,
  // Atomics, device_print, device assertions (matched by op name until the dialect has them).
  AtomicRMW, Print, Assert,
  // Float elementwise (binary, unary, ternary).
  AddF, SubF, MulF, DivF, RemF, MaximumF, MinimumF, MaxNumF, MinNumF, PowF, Atan2,
  NegF, AbsF, Exp, Exp2, Log, Log2, Log1p, Expm1, Sqrt, Rsqrt, Sin, Cos, Tan, Tanh,
  Erf, Floor, Ceil, Trunc, Round, RoundEven,
  Fma,
  // Integer elementwise.
  AddI, SubI, MulI, DivSI, DivUI, RemSI, RemUI, CeilDivSI, FloorDivSI, AndI, OrI, XOrI,
  ShLI, ShRSI, ShRUI, MaxSI, MinSI, MaxUI, MinUI, AbsI,
  CmpI, CmpF, Select,
  // Conversions.
  IntCast, ZeroExt, SIToFP, UIToFP, FPToSI, FPToUI, FloatCast, BitcastToInt, BitcastToFloat,
  // Control flow.
  ForInit, ForCheck, ForNext, IfBranch, Yield, Return,
};

constexpr uint32_t kNoSlot = ~0u;

struct Instr {
  Opcode op;
  /// CmpI/CmpF predicate, reduce kind, atomic kind.
  uint8_t pred = 0;
  /// Reduce axis, program_id axis, ForCheck: unsigned comparison.
  int32_t imm = 0;
  uint32_t res = kNoSlot;
  uint32_t a = kNoSlot, b = kNoSlot, c = kNoSlot;
  /// Jump target (ForCheck: exit, ForNext: the ForCheck, If: else, Yield: end).
  uint32_t target = 0;
  /// Index into Program::locations.
  uint32_t loc = 0;
  /// Slot copies done by control flow: from[i] -> to[i]; ForCheck also uses
  /// from2/to2 (results -> iteration arguments).
  llvm::SmallVector<uint32_t, 4> from, to;
};

struct Program {
  std::string name;
  std::vector<Slot> slots;
  std::vector<Instr> code;
  std::vector<uint32_t> argSlots;
  /// Print prefixes and assertion messages (Instr::imm indexes them).
  std::vector<std::string> strings;
  /// "file:line:col" (or "" when unknown) per location index.
  std::vector<std::string> locations;
  /// Arena images: sizes and constant values.
  std::vector<float> f32Init;
  std::vector<double> f64Init;
  std::vector<int64_t> i64Init;
  /// Largest tile (scratch space for reductions).
  size_t maxSize = 1;
};

} // namespace tessel::interp::detail

#endif // TESSEL_INTERPRETER_PROGRAM_H
