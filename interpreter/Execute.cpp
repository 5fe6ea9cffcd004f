//===- interpreter/Execute.cpp - run the instruction list per program -----===//
#include "interpreter/Elementwise.h"
#include "interpreter/Frame.h"

#include "dialect/TesselDialect.h"

#include <cstring>

using namespace tessel::interp;
using namespace tessel::interp::detail;

namespace tessel::interp::detail {

void Frame::copy(uint32_t from, uint32_t to) {
  const Slot &s = slot(from);
  switch (s.store) {
  case Store::F32: std::memcpy(fp(to), fp(from), s.size * sizeof(float)); break;
  case Store::F64: std::memcpy(dp(to), dp(from), s.size * sizeof(double)); break;
  case Store::I64: std::memcpy(ip(to), ip(from), s.size * sizeof(int64_t)); break;
  }
}

bool Frame::exec(const Instr &in) {
  switch (in.op) {
  case Opcode::ProgramId:
    ip(in.res)[0] = pid[in.imm];
    return true;
  case Opcode::NumPrograms:
    ip(in.res)[0] = num[in.imm];
    return true;
  case Opcode::Splat: {
    const Slot &r = slot(in.res);
    switch (r.store) {
    case Store::F32: std::fill_n(fp(in.res), r.size, fp(in.a)[0]); break;
    case Store::F64: std::fill_n(dp(in.res), r.size, dp(in.a)[0]); break;
    case Store::I64: std::fill_n(ip(in.res), r.size, ip(in.a)[0]); break;
    }
    return true;
  }
  case Opcode::Broadcast:
    execBroadcast(in);
    return true;
  case Opcode::Trans:
    execTrans(in);
    return true;
  case Opcode::AddPtr: {
    const Slot &r = slot(in.res);
    int64_t scale = memBytes(r.pointee, r.pointeeBits);
    const int64_t *ptr = ip(in.a), *off = ip(in.b);
    int64_t *out = ip(in.res);
    for (size_t k = 0; k < r.size; ++k)
      out[k] = int64_t(uint64_t(ptr[k]) + uint64_t(off[k]) * uint64_t(scale));
    return true;
  }
  case Opcode::Load:
    return execLoad(in);
  case Opcode::Store:
    return execStore(in);
  case Opcode::Reduce:
    execReduce(in);
    return true;
  case Opcode::Dot:
    execDot(in);
    return true;
  case Opcode::AtomicRMW:
    return execAtomic(in);
  case Opcode::Print:
    execPrint(in);
    return true;
  case Opcode::Assert:
    return execAssert(in);
  case Opcode::Fma: {
    const Slot &r = slot(in.res);
    if (r.store == Store::F64) {
      for (size_t k = 0; k < r.size; ++k)
        dp(in.res)[k] = std::fma(dp(in.a)[k], dp(in.b)[k], dp(in.c)[k]);
    } else {
      for (size_t k = 0; k < r.size; ++k)
        fp(in.res)[k] = std::fma(fp(in.a)[k], fp(in.b)[k], fp(in.c)[k]);
      roundNarrow(r.elem, fp(in.res), r.size);
    }
    return true;
  }
  case Opcode::CmpI:
  case Opcode::CmpF:
    execCompare(in);
    return true;
  case Opcode::Select:
    execSelect(in);
    return true;
  case Opcode::IntCast:
  case Opcode::ZeroExt:
  case Opcode::SIToFP:
  case Opcode::UIToFP:
  case Opcode::FPToSI:
  case Opcode::FPToUI:
  case Opcode::FloatCast:
  case Opcode::BitcastToInt:
  case Opcode::BitcastToFloat:
    execCast(in);
    return true;
  default:
    break;
  }
  const Slot &r = slot(in.res);
  uint32_t b = in.b == kNoSlot ? in.a : in.b;
  if (r.store == Store::F32) {
    if (floatOp(in.op, fp(in.res), fp(in.a), fp(b), r.size)) {
      roundNarrow(r.elem, fp(in.res), r.size);
      return true;
    }
  } else if (r.store == Store::F64) {
    if (floatOp(in.op, dp(in.res), dp(in.a), dp(b), r.size))
      return true;
  } else if (intOp(in.op, r.bits, ip(in.res), ip(in.a), ip(b), r.size)) {
    return true;
  }
  return fail(in, "internal error: instruction " + std::to_string(int(in.op)) +
                      " on " + r.typeName);
}

bool Frame::run() {
  const std::vector<Instr> &code = p.code;
  size_t pc = 0;
  while (pc < code.size()) {
    const Instr &in = code[pc];
    switch (in.op) {
    case Opcode::ForInit:
      ip(in.res)[0] = ip(in.a)[0];
      copies(in);
      ++pc;
      break;
    case Opcode::ForCheck: {
      int64_t iv = ip(in.a)[0], ub = ip(in.b)[0];
      bool more = in.imm ? uint64_t(iv) < uint64_t(ub) : iv < ub;
      if (!more) {
        pc = in.target;
        break;
      }
      copies(in);
      ++pc;
      break;
    }
    case Opcode::ForNext: {
      copies(in);
      int64_t step = ip(in.b)[0];
      if (step <= 0)
        return fail(in, "scf.for step must be positive, got " + std::to_string(step));
      int64_t *iv = ip(in.a);
      int64_t next = int64_t(uint64_t(*iv) + uint64_t(step));
      // An induction variable that would wrap ends the loop (as the GPU's would not: be safe).
      if (next < *iv) {
        pc = code[in.target].target;
        break;
      }
      *iv = sext(next, slot(in.a).bits);
      pc = in.target;
      break;
    }
    case Opcode::IfBranch:
      pc = ip(in.a)[0] ? pc + 1 : in.target;
      break;
    case Opcode::Yield:
      copies(in);
      pc = in.target;
      break;
    case Opcode::Return:
      return true;
    default:
      if (!exec(in))
        return false;
      ++pc;
      break;
    }
  }
  return true;
}

} // namespace tessel::interp::detail

namespace {

std::string argumentError(const Program &p, size_t i, const std::string &message) {
  return "argument " + std::to_string(i + 1) + " of " + p.name + ": " + message;
}

} // namespace

namespace tessel::interp {

llvm::Error CompiledKernel::run(const LaunchGrid &grid, llvm::ArrayRef<Arg> args,
                                const MemoryMap &memory) const {
  const Program &p = *program_;
  if (grid.x < 0 || grid.y < 0 || grid.z < 0)
    return llvm::createStringError("negative grid dimension for kernel " + p.name);
  if (args.size() != p.argSlots.size())
    return llvm::createStringError("kernel " + p.name + " takes " +
                                   std::to_string(p.argSlots.size()) + " arguments, got " +
                                   std::to_string(args.size()));
  Frame frame(p, memory);
  for (size_t i = 0; i < args.size(); ++i) {
    const Arg &arg = args[i];
    uint32_t s = p.argSlots[i];
    const Slot &slot = p.slots[s];
    auto mismatch = [&] {
      return llvm::createStringError(argumentError(
          p, i, "expected " + slot.typeName + ", got " + std::string(arg.kindName())));
    };
    switch (slot.elem) {
    case Elem::Ptr:
      if (!arg.isPointer())
        return mismatch();
      frame.ip(s)[0] = int64_t(arg.address());
      break;
    case Elem::Int: {
      if (!arg.isInteger())
        return mismatch();
      int64_t v = arg.intValue();
      bool fits = arg.fitsInt64() && (slot.bits >= 64 || sext(v, slot.bits) == v ||
                                      (slot.bits == 1 && v == 1));
      if (!fits)
        return llvm::createStringError(
            argumentError(p, i, "value " + arg.valueText() + " does not fit " + slot.typeName));
      frame.ip(s)[0] = sext(v, slot.bits);
      break;
    }
    default: {
      if (!arg.isFloat())
        return mismatch();
      double v = arg.floatValue();
      if (slot.elem == Elem::F64)
        frame.dp(s)[0] = v;
      else if (slot.elem == Elem::F32)
        frame.fp(s)[0] = float(v);
      else if (slot.elem == Elem::F16)
        frame.fp(s)[0] = doubleToHalfValue(v);
      else
        frame.fp(s)[0] = doubleToBF16Value(v);
      break;
    }
    }
  }
  frame.num[0] = grid.x;
  frame.num[1] = grid.y;
  frame.num[2] = grid.z;
  for (int64_t z = 0; z < grid.z; ++z)
    for (int64_t y = 0; y < grid.y; ++y)
      for (int64_t x = 0; x < grid.x; ++x) {
        frame.pid[0] = x;
        frame.pid[1] = y;
        frame.pid[2] = z;
        if (!frame.run())
          return llvm::createStringError(frame.error);
      }
  return llvm::Error::success();
}

} // namespace tessel::interp
