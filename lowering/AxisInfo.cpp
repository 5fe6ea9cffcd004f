//===- AxisInfo.cpp - forward analysis of access patterns -----------------===//
#include "lowering/AxisInfo.h"

#include "dialect/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

using namespace mlir;
using namespace mlir::tessel;

static constexpr int64_t kMaxDivisibility = int64_t(1) << 30;

AxisInfo AxisInfo::unknown(unsigned rank) {
  AxisInfo info;
  rank = std::max(rank, 1u);
  info.contiguity.assign(rank, 1);
  info.divisibility.assign(rank, 1);
  info.constancy.assign(rank, 1);
  return info;
}

static unsigned rankOf(Value value) {
  if (auto tensor = dyn_cast<RankedTensorType>(value.getType()))
    return tensor.getRank();
  return 0;
}

static int64_t shapeAt(Value value, unsigned dim) {
  if (auto tensor = dyn_cast<RankedTensorType>(value.getType()))
    return tensor.getDimSize(dim);
  return 1;
}

/// Largest power of two dividing `v` (0 is divisible by anything).
static int64_t powerOfTwoDividing(int64_t v) {
  if (v == 0)
    return kMaxDivisibility;
  return std::min<int64_t>(kMaxDivisibility, int64_t(1) << llvm::countr_zero(uint64_t(v)));
}

static int64_t gcd(int64_t a, int64_t b) { return std::gcd(a, b); }

/// Bytes per element that a pointer (tile) points to.
static int64_t pointeeBytes(Value ptr) {
  auto ptrType = cast<PtrType>(getElementTypeOrSelf(ptr.getType()));
  return std::max<int64_t>(1, ptrType.getPointeeType().getIntOrFloatBitWidth() / 8);
}

AxisInfoAnalysis::AxisInfoAnalysis(Operation *root) {
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto func = dyn_cast<func::FuncOp>(op)) {
      for (BlockArgument arg : func.getArguments()) {
        AxisInfo info = AxisInfo::unknown(1);
        if (isa<PtrType>(arg.getType()))
          info.divisibility[0] = pointeeBytes(arg);
        if (auto attr = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                            "tessel.divisibility"))
          info.divisibility[0] = std::max<int64_t>(info.divisibility[0], attr.getInt());
        facts[arg] = info;
      }
      return;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      // The induction variable starts at lb and moves by step.
      AxisInfo info = AxisInfo::unknown(1);
      info.divisibility[0] =
          gcd(get(loop.getLowerBound()).divisibility[0], get(loop.getStep()).divisibility[0]);
      facts[loop.getInductionVar()] = info;
      return;
    }
    visit(op);
  });
}

AxisInfo AxisInfoAnalysis::get(Value value) const {
  auto it = facts.find(value);
  if (it != facts.end())
    return it->second;
  return AxisInfo::unknown(rankOf(value));
}

void AxisInfoAnalysis::visit(Operation *op) {
  if (op->getNumResults() != 1)
    return;
  Value result = op->getResult(0);
  unsigned rank = std::max(rankOf(result), 1u);
  AxisInfo info = AxisInfo::unknown(rank);

  auto binary = [&](auto combine) {
    AxisInfo lhs = get(op->getOperand(0)), rhs = get(op->getOperand(1));
    if (lhs.getRank() != rank || rhs.getRank() != rank)
      return;
    for (unsigned d = 0; d < rank; ++d)
      combine(d, lhs, rhs);
  };

  APInt constant;
  if (matchPattern(result, m_ConstantInt(&constant))) {
    int64_t v = constant.getSExtValue();
    for (unsigned d = 0; d < rank; ++d) {
      info.divisibility[d] = powerOfTwoDividing(v);
      info.constancy[d] = shapeAt(result, d);
    }
  } else if (auto range = dyn_cast<MakeRangeOp>(op)) {
    info.contiguity[0] = range.getType().getDimSize(0);
    info.divisibility[0] = powerOfTwoDividing(range.getStart());
  } else if (auto splat = dyn_cast<SplatOp>(op)) {
    AxisInfo src = get(splat.getSrc());
    for (unsigned d = 0; d < rank; ++d) {
      info.divisibility[d] = src.divisibility[0];
      info.constancy[d] = shapeAt(result, d);
    }
  } else if (isa<arith::AddIOp, AddPtrOp, arith::SubIOp>(op)) {
    bool isSub = isa<arith::SubIOp>(op);
    // Offsets count elements; pointer divisibility counts bytes.
    int64_t scale = isa<AddPtrOp>(op) ? pointeeBytes(result) : 1;
    binary([&](unsigned d, const AxisInfo &lhs, const AxisInfo &rhs) {
      int64_t contiguous = gcd(lhs.contiguity[d], rhs.constancy[d]);
      if (!isSub)
        contiguous = std::max(contiguous, gcd(rhs.contiguity[d], lhs.constancy[d]));
      info.contiguity[d] = contiguous;
      info.divisibility[d] =
          gcd(lhs.divisibility[d], std::min(kMaxDivisibility, rhs.divisibility[d] * scale));
      info.constancy[d] = gcd(lhs.constancy[d], rhs.constancy[d]);
    });
  } else if (isa<arith::MulIOp>(op)) {
    binary([&](unsigned d, const AxisInfo &lhs, const AxisInfo &rhs) {
      info.divisibility[d] = std::min(kMaxDivisibility, lhs.divisibility[d] * rhs.divisibility[d]);
      info.constancy[d] = gcd(lhs.constancy[d], rhs.constancy[d]);
    });
  } else if (isa<arith::CmpIOp>(op)) {
    binary([&](unsigned d, const AxisInfo &lhs, const AxisInfo &rhs) {
      int64_t constant = gcd(lhs.constancy[d], rhs.constancy[d]);
      // A run of consecutive values starting at a multiple of D compared with a multiple
      // of D that stays the same along the run: the whole run falls on one side. (A
      // bound that changes inside the run, even a multiple of D, can split it.)
      constant = std::max(constant, gcd(gcd(lhs.contiguity[d], lhs.divisibility[d]),
                                        gcd(rhs.divisibility[d], rhs.constancy[d])));
      if (lhs.constancy[d] == shapeAt(result, d))
        constant = std::max(constant, gcd(gcd(rhs.contiguity[d], rhs.divisibility[d]),
                                          lhs.divisibility[d]));
      info.constancy[d] = std::min(constant, shapeAt(result, d));
    });
  } else if (isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(op)) {
    binary([&](unsigned d, const AxisInfo &lhs, const AxisInfo &rhs) {
      info.constancy[d] = gcd(lhs.constancy[d], rhs.constancy[d]);
    });
  } else if (isa<arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp, ConvertLayoutOp>(op)) {
    info = get(op->getOperand(0));
  } else if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
    AxisInfo src = get(broadcast.getSrc());
    if (src.getRank() == rank) {
      info = src;
      for (unsigned d = 0; d < rank; ++d)
        if (broadcast.getSrc().getType().getDimSize(d) == 1) {
          info.contiguity[d] = 1;
          info.constancy[d] = shapeAt(result, d);
        }
    }
  } else if (auto expand = dyn_cast<ExpandDimsOp>(op)) {
    AxisInfo src = get(expand.getSrc());
    unsigned axis = expand.getAxis();
    bool elementsAligned = llvm::all_of(src.contiguity, [](int64_t c) { return c == 1; });
    int64_t elementDivisibility =
        elementsAligned ? *llvm::min_element(src.divisibility) : 1;
    info = src;
    info.contiguity.insert(info.contiguity.begin() + axis, 1);
    info.divisibility.insert(info.divisibility.begin() + axis, elementDivisibility);
    info.constancy.insert(info.constancy.begin() + axis, 1);
  } else if (auto select = dyn_cast<arith::SelectOp>(op)) {
    AxisInfo cond = get(select.getCondition());
    AxisInfo lhs = get(select.getTrueValue()), rhs = get(select.getFalseValue());
    if (cond.getRank() == rank && lhs.getRank() == rank && rhs.getRank() == rank)
      for (unsigned d = 0; d < rank; ++d) {
        info.constancy[d] = gcd(cond.constancy[d], gcd(lhs.constancy[d], rhs.constancy[d]));
        info.divisibility[d] = gcd(lhs.divisibility[d], rhs.divisibility[d]);
      }
  } else {
    return;
  }
  facts[result] = info;
}

unsigned mlir::tessel::getAccessVectorWidth(const AxisInfoAnalysis &analysis, Value ptr,
                                            Value mask, unsigned fastDim, unsigned run,
                                            unsigned elementBytes) {
  AxisInfo info = analysis.get(ptr);
  int64_t width = std::min<int64_t>(run, 16 / std::max(1u, elementBytes));
  if (fastDim < info.getRank()) {
    width = std::min<int64_t>(width, info.contiguity[fastDim]);
    width = std::min<int64_t>(width, std::max<int64_t>(1, info.divisibility[fastDim] /
                                                              elementBytes));
  }
  if (mask) {
    AxisInfo maskInfo = analysis.get(mask);
    if (fastDim < maskInfo.getRank())
      width = std::min<int64_t>(width, maskInfo.constancy[fastDim]);
  }
  width = std::max<int64_t>(1, width);
  return unsigned(llvm::bit_floor(uint64_t(width)));
}
