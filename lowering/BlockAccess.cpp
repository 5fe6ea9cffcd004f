//===- BlockAccess.cpp - recognise loads of one block of a matrix ---------===//
#include "lowering/BlockAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// Sees through broadcasts and sign extensions: `rows.to(i64)[:, None] * stride`
/// (64-bit offsets into a tensor of 2^31 elements or more) reads the same block.
Value skipBroadcast(Value v) {
  while (true) {
    if (auto broadcast = v.getDefiningOp<BroadcastOp>())
      v = broadcast.getSrc();
    else if (auto extend = v.getDefiningOp<arith::ExtSIOp>())
      v = extend.getIn();
    else
      return v;
  }
}

/// A kernel argument of the function holding `user`, or a constant.
FailureOr<ArgOrConstant> matchScalar(Value v) {
  v = skipBroadcast(v);
  ArgOrConstant result;
  APInt constant;
  if (matchPattern(v, m_ConstantInt(&constant))) {
    result.value = constant.getSExtValue();
    return result;
  }
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
    return failure();
  result.argument = arg.getArgNumber();
  return result;
}

/// `splat(x)` -> x.
Value matchSplat(Value v) {
  auto splat = v.getDefiningOp<SplatOp>();
  return splat ? splat.getSrc() : Value();
}

/// A 1-D `start + arange(0, n)` (or `arange(0, n)`): the scalar start (null: 0) and n.
FailureOr<std::pair<Value, int64_t>> matchRange(Value v) {
  if (auto range = v.getDefiningOp<MakeRangeOp>()) {
    if (range.getStart() != 0)
      return failure();
    return std::make_pair(Value(), int64_t(range.getEnd()));
  }
  auto add = v.getDefiningOp<arith::AddIOp>();
  if (!add)
    return failure();
  for (auto [x, y] : {std::pair(add.getLhs(), add.getRhs()), std::pair(add.getRhs(), add.getLhs())}) {
    Value start = matchSplat(x);
    auto range = y.getDefiningOp<MakeRangeOp>();
    if (start && range && range.getStart() == 0)
      return std::make_pair(start, int64_t(range.getEnd()));
  }
  return failure();
}

/// `expand_dims(r, axis)` -> r (1-D, sign extensions skipped).
Value matchExpand(Value v, int64_t axis) {
  auto expand = skipBroadcast(v).getDefiningOp<ExpandDimsOp>();
  return expand && expand.getAxis() == axis ? skipBroadcast(expand.getSrc()) : Value();
}

/// `(r[:, None] < bound)` or `(c[None, :] < bound)` -> bound, for the given r / c.
FailureOr<ArgOrConstant> matchBound(Value v, Value index, int64_t axis) {
  auto cmp = skipBroadcast(v).getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::slt ||
      matchExpand(cmp.getLhs(), axis) != index)
    return failure();
  Value bound = matchSplat(cmp.getRhs());
  if (!bound)
    return failure();
  return matchScalar(bound);
}

} // namespace

FailureOr<BlockAccess> mlir::tessel::matchBlockAccess(LoadOp load) {
  auto type = dyn_cast<RankedTensorType>(load.getType());
  if (!type || type.getRank() != 2 || !load.getMask())
    return failure();
  // ptr = broadcast(base + r[:, None] * stride) + c[None, :]
  auto outer = load.getPtr().getDefiningOp<AddPtrOp>();
  if (!outer)
    return failure();
  Value col = matchExpand(outer.getOffset(), 0);
  auto inner = skipBroadcast(outer.getPtr()).getDefiningOp<AddPtrOp>();
  if (!col || !inner)
    return failure();
  Value base = matchSplat(inner.getPtr());
  auto mul = inner.getOffset().getDefiningOp<arith::MulIOp>();
  if (!base || !mul)
    return failure();
  Value row, stride;
  for (auto [x, y] : {std::pair(mul.getLhs(), mul.getRhs()), std::pair(mul.getRhs(), mul.getLhs())})
    if (Value r = matchExpand(x, 1); r && matchSplat(y)) {
      row = r;
      stride = matchSplat(y);
    }
  if (!row)
    return failure();
  FailureOr<std::pair<Value, int64_t>> rowRange = matchRange(row), colRange = matchRange(col);
  FailureOr<ArgOrConstant> baseArg = matchScalar(base), strideArg = matchScalar(stride);
  if (failed(rowRange) || failed(colRange) || failed(baseArg) || baseArg->argument < 0 ||
      failed(strideArg) || rowRange->second != type.getDimSize(0) ||
      colRange->second != type.getDimSize(1))
    return failure();
  // mask = (r[:, None] < rows) & (c[None, :] < cols), either order.
  auto both = load.getMask().getDefiningOp<arith::AndIOp>();
  if (!both)
    return failure();
  for (auto [x, y] : {std::pair(both.getLhs(), both.getRhs()), std::pair(both.getRhs(), both.getLhs())}) {
    FailureOr<ArgOrConstant> rows = matchBound(x, row, 1), cols = matchBound(y, col, 0);
    if (failed(rows) || failed(cols))
      continue;
    BlockAccess access;
    access.baseArgument = baseArg->argument;
    access.rowStride = *strideArg;
    access.rows = *rows;
    access.cols = *cols;
    access.row = rowRange->first;
    access.col = colRange->first;
    access.blockRows = type.getDimSize(0);
    access.blockCols = type.getDimSize(1);
    return access;
  }
  return failure();
}
