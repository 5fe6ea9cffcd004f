//===- interpreter/Frame.h - the state of one run ---------------*- C++ -*-===//
//
// Internal to the interpreter: the arenas of a run (copied from the program's
// images once per launch) and the program id, with one method per kind of
// instruction. Execute.cpp holds the dispatch loop, ExecuteMemory.cpp the
// checked memory accesses, atomics and device output, ExecuteTile.cpp the tile
// operations (reductions, broadcasts, dot, casts, comparisons).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_INTERPRETER_FRAME_H
#define TESSEL_INTERPRETER_FRAME_H

#include "interpreter/Interpreter.h"
#include "interpreter/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::interp::detail {

/// Bytes of one element in memory (i1 takes a byte).
unsigned memBytes(Elem elem, unsigned bits);
/// "0x1f00".
std::string hex(uint64_t v);
/// The multi-dimensional index of element `k` of a tile: "[1, 3]" ("" for scalars).
std::string indexText(const Slot &s, size_t k);

class Frame {
public:
  Frame(const Program &p, const MemoryMap &memory)
      : p(p), memory(memory), f32(p.f32Init), f64(p.f64Init), i64(p.i64Init),
        scratch(p.maxSize) {}

  const Program &p;
  const MemoryMap &memory;
  std::vector<float> f32;
  std::vector<double> f64;
  std::vector<int64_t> i64;
  std::vector<double> scratch;
  int64_t pid[3] = {0, 0, 0};
  int64_t num[3] = {1, 1, 1};
  std::string error;

  float *fp(uint32_t s) { return f32.data() + p.slots[s].offset; }
  double *dp(uint32_t s) { return f64.data() + p.slots[s].offset; }
  int64_t *ip(uint32_t s) { return i64.data() + p.slots[s].offset; }
  const Slot &slot(uint32_t s) const { return p.slots[s]; }

  /// Runs one program instance; false with `error` set on failure.
  bool run();

  // One method per kind of instruction (false: `error` is set), and their helpers.

  /// The buffer of the last checked access: consecutive accesses mostly hit it.
  const Buffer *last = nullptr;

  bool inLastBuffer(uint64_t address, unsigned bytes) const {
    return last && address - last->base <= last->bytes &&
           bytes <= last->bytes - (address - last->base) && address % bytes == 0;
  }

  bool fail(const Instr &in, const std::string &message);
  void copy(uint32_t from, uint32_t to);
  void copies(const Instr &in) {
    for (size_t k = 0; k < in.from.size(); ++k)
      copy(in.from[k], in.to[k]);
  }
  bool checkAccess(const Instr &in, const char *what, uint32_t ptrSlot, size_t k, unsigned bytes);
  bool exec(const Instr &in);
  bool execLoad(const Instr &in);
  bool execStore(const Instr &in);
  void execReduce(const Instr &in);
  void execBroadcast(const Instr &in);
  void execTrans(const Instr &in);
  void execDot(const Instr &in);
  bool execAtomic(const Instr &in);
  void execPrint(const Instr &in);
  bool execAssert(const Instr &in);
  void execCast(const Instr &in);
  void execCompare(const Instr &in);
  void execSelect(const Instr &in);
};

} // namespace tessel::interp::detail

#endif // TESSEL_INTERPRETER_FRAME_H
