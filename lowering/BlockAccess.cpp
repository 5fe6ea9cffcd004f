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

/// `index >= 0` (before or after the expand, as the bound's compare).
bool isNotNegativeTest(Value test, Value index, int64_t axis, bool expandedAfter) {
  auto cmp = test.getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::sge)
    return false;
  Value lhs = expandedAfter ? skipBroadcast(cmp.getLhs()) : matchExpand(cmp.getLhs(), axis);
  Value rhs = cmp.getRhs(), splatted = matchSplat(rhs);
  return lhs == index &&
         (matchPattern(rhs, m_Zero()) || (splatted && matchPattern(splatted, m_Zero())));
}

/// `(r[:, None] < bound)` or `(c[None, :] < bound)` -> bound, for the given r / c; also
/// with the compare before the expand, `(r < bound)[:, None]` (a kernel that names the
/// test once, as `row_ok = rows < n`, and expands it where it loads), and either form
/// with `r >= 0` and-ed to it (a tensor descriptor's check of an offset that may be
/// negative: TMA reads zeros at negative coordinates too).
FailureOr<ArgOrConstant> matchBound(Value v, Value index, int64_t axis) {
  Value test = skipBroadcast(v);
  auto expand = test.getDefiningOp<ExpandDimsOp>();
  bool expandedAfter = expand && expand.getAxis() == axis;
  if (expandedAfter)
    test = expand.getSrc();
  if (auto both = test.getDefiningOp<arith::AndIOp>()) {
    if (isNotNegativeTest(both.getLhs(), index, axis, expandedAfter))
      test = both.getRhs();
    else if (isNotNegativeTest(both.getRhs(), index, axis, expandedAfter))
      test = both.getLhs();
  }
  auto cmp = test.getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::slt)
    return failure();
  Value lhs = expandedAfter ? skipBroadcast(cmp.getLhs()) : matchExpand(cmp.getLhs(), axis);
  if (lhs != index)
    return failure();
  Value bound = matchSplat(cmp.getRhs());
  if (!bound)
    return failure();
  return matchScalar(bound);
}

/// `index * stride` terms of a scalar offset (sums of them), each stride a kernel
/// argument or constant and each index an i32 (sign extensions skipped).
LogicalResult matchBatchTerms(Value offset, SmallVectorImpl<BatchIndex> &batch) {
  if (auto add = offset.getDefiningOp<arith::AddIOp>())
    return success(succeeded(matchBatchTerms(add.getLhs(), batch)) &&
                   succeeded(matchBatchTerms(add.getRhs(), batch)));
  auto mul = offset.getDefiningOp<arith::MulIOp>();
  if (!mul)
    return failure();
  for (auto [x, y] : {std::pair(mul.getLhs(), mul.getRhs()), std::pair(mul.getRhs(), mul.getLhs())}) {
    FailureOr<ArgOrConstant> stride = matchScalar(y);
    Value index = skipBroadcast(x);
    if (failed(stride) || !index.getType().isInteger(32))
      continue;
    batch.push_back({index, *stride});
    return success();
  }
  return failure();
}

/// The kernel argument a scalar pointer starts from, and the batch terms added to it.
FailureOr<int64_t> matchBase(Value base, SmallVectorImpl<BatchIndex> &batch) {
  if (auto add = base.getDefiningOp<AddPtrOp>()) {
    if (isa<ShapedType>(add.getType()) || failed(matchBatchTerms(add.getOffset(), batch)))
      return failure();
    return matchBase(add.getPtr(), batch);
  }
  FailureOr<ArgOrConstant> arg = matchScalar(base);
  if (failed(arg) || arg->argument < 0)
    return failure();
  return arg->argument;
}

} // namespace

FailureOr<BlockAccess> mlir::tessel::matchBlockAccess(LoadOp load) {
  auto type = dyn_cast<RankedTensorType>(load.getType());
  if (!type || type.getRank() != 2)
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
  BlockAccess access;
  FailureOr<std::pair<Value, int64_t>> rowRange = matchRange(row), colRange = matchRange(col);
  FailureOr<int64_t> baseArg = matchBase(base, access.batch);
  FailureOr<ArgOrConstant> strideArg = matchScalar(stride);
  if (failed(rowRange) || failed(colRange) || failed(baseArg) || failed(strideArg) ||
      access.batch.size() > 2 || rowRange->second != type.getDimSize(0) ||
      colRange->second != type.getDimSize(1))
    return failure();
  access.baseArgument = *baseArg;
  access.rowStride = *strideArg;
  access.row = rowRange->first;
  access.col = colRange->first;
  access.blockRows = type.getDimSize(0);
  access.blockCols = type.getDimSize(1);
  // Without a bound, a dimension reads what the load names: columns from 0 exactly the
  // tile's, anything else as far as the coordinates go.
  access.rows.value = kUnboundedExtent;
  access.cols.value = access.col ? kUnboundedExtent : access.blockCols;
  Value mask = load.getMask();
  if (!mask)
    return access;
  // mask = (r[:, None] < rows) & (c[None, :] < cols), either order, or one of the two.
  if (auto both = mask.getDefiningOp<arith::AndIOp>()) {
    for (auto [x, y] : {std::pair(both.getLhs(), both.getRhs()), std::pair(both.getRhs(), both.getLhs())}) {
      FailureOr<ArgOrConstant> rows = matchBound(x, row, 1), cols = matchBound(y, col, 0);
      if (failed(rows) || failed(cols))
        continue;
      access.rows = *rows;
      access.cols = *cols;
      return access;
    }
    return failure();
  }
  if (FailureOr<ArgOrConstant> rows = matchBound(mask, row, 1); succeeded(rows)) {
    access.rows = *rows;
    return access;
  }
  if (FailureOr<ArgOrConstant> cols = matchBound(mask, col, 0); succeeded(cols)) {
    access.cols = *cols;
    return access;
  }
  return failure();
}
