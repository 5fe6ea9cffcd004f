//===- DotOnWgmma.cpp - tessel.dot on sm_90a's wgmma.mma_async ------------===//
//
// Three forms (WgmmaLayout.h): f16/bf16 from two descriptors into the bulk copies'
// buffers; f16/bf16 with A from registers (the mma rows layout) and B by descriptor,
// from its ring or staged 128-byte swizzled; tf32 transposed, B^T from registers and A
// by descriptor. A synchronous dot commits and waits; an `async` one leaves the wait to
// tessel.dot_wait.
//
//===----------------------------------------------------------------------===//
#include "dialect/Target.h"
#include "lowering/DotEmitters.h"
#include "lowering/MmaLayout.h"
#include "lowering/WgmmaLayout.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::dot;

namespace {
/// A wgmma shared-memory matrix descriptor: start address, leading and stride byte
/// offsets (16-byte units) and the 128-byte swizzle mode.
Value wgmmaDescriptor(OpBuilder &b, Location loc, Value address, int64_t leading, int64_t stride) {
  Type i64 = b.getI64Type();
  Value start = arith::ShRUIOp::create(b, loc, address, createI32(b, loc, 4));
  start = arith::AndIOp::create(b, loc, start, createI32(b, loc, 0x3FFF));
  start = arith::ExtUIOp::create(b, loc, i64, start);
  uint64_t fixed = (uint64_t((leading >> 4) & 0x3FFF) << 16) |
                   (uint64_t((stride >> 4) & 0x3FFF) << 32) | (uint64_t(1) << 62);
  Value constant = arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(int64_t(fixed)));
  return arith::OrIOp::create(b, loc, start, constant);
}
} // namespace

/// `wgmma.wait_group pending`: takes and returns the accumulator registers `regs` (in
/// chunks the asm can take), so nothing reads them before the wait.
void dot::waitForWgmma(OpBuilder &b, Location loc, unsigned pending,
                       SmallVectorImpl<Value> &regs) {
  constexpr unsigned kChunk = 128;
  std::string text = "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";";
  for (unsigned start = 0, e = regs.size(); start < e; start += kChunk) {
    unsigned count = std::min(kChunk, e - start);
    std::string constraints;
    for (unsigned i = 0; i < count; ++i)
      constraints += std::string(i ? ",=f" : "=f");
    for (unsigned i = 0; i < count; ++i)
      constraints += "," + std::to_string(i);
    auto type = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(count, b.getF32Type()));
    ValueRange chunk = ValueRange(regs).slice(start, count);
    Value d = createInlinePtx(b, loc, type, chunk, text, constraints).getResult(0);
    for (unsigned i = 0; i < count; ++i)
      regs[start + i] = LLVM::ExtractValueOp::create(b, loc, d, i);
  }
}

namespace {
/// One `wgmma.mma_async` as inline PTX on `count` f32 accumulator registers: outputs
/// $0..count-1, then the instruction's inputs (`input(i)` names input i), the last of
/// them scale-d (set into a predicate), then the accumulators again, tied to the outputs.
/// `overwrite()` is the same instruction without the tied accumulators, for scale-d = 0
/// (D = A B): a zero accumulator then costs no moves into the output registers, which
/// ptxas would otherwise fence with a warpgroup.arrive (C7519).
struct WgmmaInstruction {
  unsigned count;
  std::string text, constraints;
  Type accType;
  bool tied = true;

  WgmmaInstruction overwrite() const {
    WgmmaInstruction copy = *this;
    copy.tied = false;
    copy.constraints = constraints.substr(0, untiedLength);
    return copy;
  }

  WgmmaInstruction(MLIRContext *ctx, unsigned count) : count(count) {
    accType = LLVM::LLVMStructType::getLiteral(ctx,
                                               SmallVector<Type>(count, Float32Type::get(ctx)));
  }
  std::string input(unsigned i) const { return "$" + std::to_string(count + i); }

  /// `opcode {accumulators}, operands, p, immediates;` with `numInputs` inputs of
  /// `inputConstraints`, the last one scale-d.
  void define(StringRef opcode, StringRef operands, unsigned numInputs,
              StringRef inputConstraints, StringRef immediates) {
    std::string outputs, ties, regList;
    for (unsigned i = 0; i < count; ++i) {
      outputs += std::string(i ? ",=f" : "=f");
      ties += "," + std::to_string(i);
      regList += (i ? ", $" : "$") + std::to_string(i);
    }
    text = "{\n.reg .pred p;\nsetp.ne.b32 p, " + input(numInputs - 1) + ", 0;\n" +
           opcode.str() + " {" + regList + "}, " + operands.str() + ", p, " + immediates.str() +
           ";\n}";
    constraints = outputs + "," + inputConstraints.str() + ties;
    untiedLength = constraints.size() - ties.size();
  }

  /// Issues it on `inputs` and the accumulator registers `regs` of `acc` (updated).
  void issue(OpBuilder &b, Location loc, SmallVector<Value> inputs, ArrayRef<unsigned> regs,
             SmallVectorImpl<Value> &acc) const {
    if (tied)
      for (unsigned r : regs)
        inputs.push_back(acc[r]);
    Value d = createInlinePtx(b, loc, accType, inputs, text, constraints).getResult(0);
    for (unsigned i = 0; i < count; ++i)
      acc[regs[i]] = LLVM::ExtractValueOp::create(b, loc, d, i);
  }

private:
  size_t untiedLength = 0;
};

/// Orders this warp's register writes before the wgmma that follow (`wgmma.fence`).
void fenceWgmma(OpBuilder &b, Location loc) {
  createInlinePtx(b, loc, Type(), ValueRange(), "wgmma.fence.sync.aligned;", "");
}

/// The end of a dot's wgmma: one commit group and, for a synchronous dot, a wait for it
/// (an `async` dot leaves that to tessel.dot_wait).
void commitWgmma(OpBuilder &b, Location loc, DotOp op, SmallVectorImpl<Value> &acc) {
  createInlinePtx(b, loc, Type(), ValueRange(), "wgmma.commit_group.sync.aligned;", "");
  if (!op.getAsync())
    waitForWgmma(b, loc, 0, acc);
}

/// The accumulator registers of 64-row instruction `inst` of an N-column f16/bf16 wgmma
/// (WgmmaLayout.h): d[4c + 2h + j] is repetition 2 inst + h, column register 2c + j.
SmallVector<unsigned> getWgmmaInstructionRegisters(const TileLayout &layout, int64_t inst,
                                                   int64_t n) {
  SmallVector<unsigned> regs(n / 2);
  for (unsigned c = 0; c < n / 8; ++c)
    for (unsigned h = 0; h < 2; ++h)
      for (unsigned j = 0; j < 2; ++j)
        regs[4 * c + 2 * h + j] = layout.getRegister({unsigned(2 * inst + h), 2 * c + j});
  return regs;
}
} // namespace

/// Register-A wgmma (WgmmaLayout.h): per warpgroup and 64-row instruction, K / 16
/// `wgmma.mma_async` whose A fragments are the thread's registers of A (the mma rows
/// layout) and whose B is a descriptor into a 128-byte-swizzled buffer: K-major (B^T
/// stored as N rows of K, blocks of 64 columns N * 128 bytes apart) or N-major (a wgmma_b
/// buffer of K rows).
void dot::emitRegisterWgmma(OpBuilder &b, Location loc, DotOp op, const TileLayout &layout,
                            ValueRange aRegs, Value bBase, bool bKMajor,
                            SmallVectorImpl<Value> &acc) {
  auto aType = cast<RankedTensorType>(op.getA().getType());
  int64_t m = aType.getDimSize(0), k = aType.getDimSize(1);
  int64_t n = cast<ShapedType>(op.getB().getType()).getDimSize(1);
  unsigned warps = layout.getRoot().getWarpsPerCTA()[0];
  int64_t repeats = m / (8 * warps);
  Type elem = aType.getElementType();
  int64_t bytes = elem.getIntOrFloatBitWidth() / 8, perRow = getSwizzleBlockColumns(elem);
  TileLayout aLayout = *TileLayout::get(aType);
  std::string name = elem.isBF16() ? "bf16" : "f16";

  WgmmaInstruction mma(b.getContext(), unsigned(n / 2));
  mma.define("wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." + name + "." +
                 name,
             "{" + mma.input(0) + ", " + mma.input(1) + ", " + mma.input(2) + ", " +
                 mma.input(3) + "}, " + mma.input(4),
             6, "r,r,r,r,l,r", bKMajor ? "1, 1, 0" : "1, 1, 1");
  Value bAddress = LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), bBase);
  Value one = createI32(b, loc, 1);
  // A zero accumulator (S = Q K^T) is not read: the first K step overwrites it.
  bool zeroAcc = isZeroTile(op.getAcc());
  WgmmaInstruction first = zeroAcc ? mma.overwrite() : mma;
  // Every fragment is packed before the fence: a register written between wgmma makes
  // ptxas insert a warpgroup.arrive before the next one (C7519).
  SmallVector<SmallVector<Value>> inputs;
  for (int64_t inst = 0; inst < repeats / 2; ++inst) {
    for (int64_t kk = 0; kk < k; kk += 16) {
      auto row = [&](int64_t r) { return unsigned(2 * inst + r); };
      unsigned col = unsigned(kk / 4);
      SmallVector<Value> &in = inputs.emplace_back();
      in = {packOperandA(b, loc, aRegs, aLayout, elem, row(0), col),
            packOperandA(b, loc, aRegs, aLayout, elem, row(1), col),
            packOperandA(b, loc, aRegs, aLayout, elem, row(0), col + 2),
            packOperandA(b, loc, aRegs, aLayout, elem, row(1), col + 2)};
      if (bKMajor)
        in.push_back(wgmmaDescriptor(
            b, loc, add(b, loc, bAddress, kk / perRow * n * 128 + kk % perRow * bytes), 16, 1024));
      else
        in.push_back(wgmmaDescriptor(b, loc, add(b, loc, bAddress, kk / 8 * 1024), k * 128, 1024));
      in.push_back(zeroAcc && kk == 0 ? createI32(b, loc, 0) : one);
    }
  }
  fenceWgmma(b, loc);
  for (int64_t inst = 0; inst < repeats / 2; ++inst) {
    SmallVector<unsigned> regs = getWgmmaInstructionRegisters(layout, inst, n);
    for (int64_t step = 0; step < k / 16; ++step)
      (step == 0 ? first : mma).issue(b, loc, inputs[inst * (k / 16) + step], regs, acc);
  }
  commitWgmma(b, loc, op, acc);
}

/// The wgmma K loop (WgmmaLayout.h): per warpgroup and 64-row instruction, K / 16
/// `wgmma.mma_async` on descriptors into the swizzled buffers, then one commit and, for
/// a synchronous dot, a wait for all (an `async` dot leaves that to tessel.dot_wait).
void dot::emitWgmma(OpBuilder &b, Location loc, DotOp op, const TileLayout &layout,
                    Value aBase, Value bBase, bool bKMajor, const ThreadIndex &thread,
                    SmallVectorImpl<Value> &acc) {
  auto aType = cast<SharedType>(op.getA().getType());
  auto bType = cast<SharedType>(op.getB().getType());
  int64_t m = aType.getShape()[0], k = aType.getShape()[1], n = bType.getShape()[1];
  int64_t perRow = getSwizzleBlockColumns(aType.getElementType());
  unsigned warps = layout.getRoot().getWarpsPerCTA()[0];
  int64_t repeats = m / (8 * warps);
  std::string elem = aType.getElementType().isBF16() ? "bf16" : "f16";
  Type i32 = b.getI32Type();
  Value warpGroup = arith::ShRUIOp::create(b, loc, thread.warp, createI32(b, loc, 2));
  Value aAddress = LLVM::PtrToIntOp::create(b, loc, i32, aBase);
  aAddress = arith::AddIOp::create(
      b, loc, aAddress, arith::MulIOp::create(b, loc, warpGroup, createI32(b, loc, 32 * repeats * 128)));
  Value bAddress = LLVM::PtrToIntOp::create(b, loc, i32, bBase);
  Value one = createI32(b, loc, 1);

  unsigned count = unsigned(n / 2); // accumulator registers per instruction
  WgmmaInstruction mma(b.getContext(), count);
  mma.define("wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." + elem + "." +
                 elem,
             mma.input(0) + ", " + mma.input(1), 3, "l,l,r",
             bKMajor ? "1, 1, 0, 0" : "1, 1, 0, 1");

  // A zero accumulator is not read: the first K step overwrites it.
  bool zeroAcc = isZeroTile(op.getAcc());
  WgmmaInstruction first = zeroAcc ? mma.overwrite() : mma;
  Value zero = zeroAcc ? createI32(b, loc, 0) : Value();

  fenceWgmma(b, loc);
  for (int64_t inst = 0; inst < repeats / 2; ++inst) {
    SmallVector<unsigned> regs = getWgmmaInstructionRegisters(layout, inst, n);
    for (int64_t kk = 0; kk < k; kk += 16) {
      // A's 64-column blocks are M rows of 128 bytes apart (one block: K = 64).
      int64_t aOffset = inst * 64 * 128 + kk / perRow * m * 128 + kk % perRow * 2;
      Value aStart = arith::AddIOp::create(b, loc, aAddress, createI32(b, loc, aOffset));
      // B N-major (a wgmma_b buffer of K rows), or K-major (B^T stored as N rows of K,
      // blocks of 64 columns N * 128 bytes apart).
      Value bStart = arith::AddIOp::create(
          b, loc, bAddress,
          createI32(b, loc, bKMajor ? kk / perRow * n * 128 + kk % perRow * 2 : kk / 8 * 1024));
      Value aDescriptor = wgmmaDescriptor(b, loc, aStart, 16, 1024);
      Value bDescriptor = bKMajor ? wgmmaDescriptor(b, loc, bStart, 16, 1024)
                                  : wgmmaDescriptor(b, loc, bStart, k * 128, 1024);
      (kk == 0 ? first : mma)
          .issue(b, loc, {aDescriptor, bDescriptor, zeroAcc && kk == 0 ? zero : one}, regs, acc);
    }
  }
  commitWgmma(b, loc, op, acc);
}

/// tf32 on wgmma, transposed (WgmmaLayout.h): C^T = B^T A^T. Per K step of 8 and pair of
/// column repetitions, one `wgmma.mma_async m64nMk8` whose A (B^T) each warp loads into
/// registers from the swizzled B buffer, rounded to tf32, and whose B is the swizzled A
/// buffer (K-major, 128-byte rows) through a descriptor. A synchronous dot commits once
/// and waits; an async one commits per K step (see below).
void dot::emitWgmmaTf32(OpBuilder &b, Location loc, DotOp op, const TileLayout &layout,
                        Value aBase, Value bBase, const ThreadIndex &thread,
                        SmallVectorImpl<Value> &acc) {
  auto aType = cast<SharedType>(op.getA().getType());
  auto bType = cast<SharedType>(op.getB().getType());
  int64_t m = aType.getShape()[0], k = aType.getShape()[1], n = bType.getShape()[1];
  unsigned warps = layout.getRoot().getWarpsPerCTA()[1];
  int64_t repeats = n / (8 * warps); // column repetitions, two per instruction
  Type i32 = b.getI32Type();
  auto c = [&](int64_t v) { return createI32(b, loc, v); };
  auto shr = [&](Value v, unsigned s) { return arith::ShRUIOp::create(b, loc, v, c(s)).getResult(); };
  auto shl = [&](Value v, unsigned s) { return arith::ShLIOp::create(b, loc, v, c(s)).getResult(); };
  auto andi = [&](Value v, int64_t x) { return arith::AndIOp::create(b, loc, v, c(x)).getResult(); };
  auto addv = [&](Value x, Value y) { return arith::AddIOp::create(b, loc, x, y).getResult(); };

  // The lane's column n = 8 warp + lane / 4 and rows k % 8 = lane % 4 (+ 4): in the
  // swizzled B buffer, block n / 32 (K rows of 128 bytes each), row k, chunk
  // ((n % 32) / 4) ^ (k % 8), word n % 4. A repetition moves n by 8W, a multiple of 32:
  // whole blocks.
  Value col = addv(mul(b, loc, thread.warp, 8), shr(thread.lane, 2));
  Value row = andi(thread.lane, 3);
  Value colPart = addv(mul(b, loc, shr(col, 5), k * 128), shl(andi(col, 3), 2));
  Value laneOffset[2];
  for (int64_t half = 0; half < 2; ++half) {
    Value k8 = add(b, loc, row, 4 * half);
    Value chunk = arith::XOrIOp::create(b, loc, andi(shr(col, 2), 7), k8);
    laneOffset[half] = addv(addv(colPart, shl(k8, 7)), shl(chunk, 4));
  }
  auto loadB = [&](int64_t rep, int64_t half, int64_t kk) {
    int64_t offset = rep * (8 * warps / 32) * k * 128 + kk * 128;
    Value address = byteOffset(b, loc, bBase, add(b, loc, laneOffset[half], offset));
    return roundToTF32(b, loc, LLVM::LoadOp::create(b, loc, i32, address, 4), /*hopper=*/true);
  };
  // wgmma reads its register operand while in flight: overwriting it before a wait that
  // covers the instruction is undefined (and measurably wrong once the next iteration's
  // loads come early). An async dot (its last group still running when the next
  // iteration's dot starts) therefore commits one group per K step and, before loading
  // a step's fragments, waits for the previous dot's group of that step
  // (kTf32WgmmaGroups - 1 younger groups may stay in flight; tessel.dot_wait scales).
  bool async = op.getAsync();
  SmallVector<SmallVector<Value>> aFrags(repeats / 2 * (k / 8)); // [instruction][k step]
  auto loadStep = [&](int64_t kk) {
    for (int64_t inst = 0; inst < repeats / 2; ++inst)
      aFrags[inst * (k / 8) + kk / 8] = {loadB(2 * inst, 0, kk), loadB(2 * inst + 1, 0, kk),
                                         loadB(2 * inst, 1, kk), loadB(2 * inst + 1, 1, kk)};
  };
  if (!async)
    for (int64_t kk = 0; kk < k; kk += 8)
      loadStep(kk);

  unsigned count = unsigned(m / 2); // accumulator registers per instruction
  WgmmaInstruction mma(b.getContext(), count);
  mma.define("wgmma.mma_async.sync.aligned.m64n" + std::to_string(m) + "k8.f32.tf32.tf32",
             "{" + mma.input(0) + ", " + mma.input(1) + ", " + mma.input(2) + ", " +
                 mma.input(3) + "}, " + mma.input(4),
             6, "r,r,r,r,l,r", "1, 1");
  Value aAddress = LLVM::PtrToIntOp::create(b, loc, i32, aBase);
  Value one = c(1);

  // D^T's rows 16 (w % 4) + lane / 4 + 8h are repetition 2 inst + h; its columns
  // 8c + 2 (lane % 4) + j are the accumulator's rows.
  SmallVector<SmallVector<unsigned>> regs(repeats / 2, SmallVector<unsigned>(count));
  for (int64_t inst = 0; inst < repeats / 2; ++inst)
    for (unsigned col8 = 0; col8 < m / 8; ++col8)
      for (unsigned h = 0; h < 2; ++h)
        for (unsigned j = 0; j < 2; ++j)
          regs[inst][4 * col8 + 2 * h + j] =
              layout.getRegister({2 * col8 + j, unsigned(2 * inst + h)});
  auto issueStep = [&](int64_t kk) {
    Value start = arith::AddIOp::create(b, loc, aAddress, c(kk * 4));
    for (int64_t inst = 0; inst < repeats / 2; ++inst) {
      SmallVector<Value> inputs(aFrags[inst * (k / 8) + kk / 8]);
      inputs.push_back(wgmmaDescriptor(b, loc, start, 16, 1024));
      inputs.push_back(one);
      mma.issue(b, loc, inputs, regs[inst], acc);
    }
  };
  if (!async) {
    fenceWgmma(b, loc);
    for (int64_t kk = 0; kk < k; kk += 8)
      issueStep(kk);
    commitWgmma(b, loc, op, acc);
    return;
  }
  for (int64_t kk = 0; kk < k; kk += 8) {
    waitForWgmma(b, loc, kTf32WgmmaGroups - 1, acc);
    loadStep(kk);
    fenceWgmma(b, loc);
    issueStep(kk);
    commitWgmma(b, loc, op, acc); // async: no wait
  }
}
