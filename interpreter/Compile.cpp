//===- interpreter/Compile.cpp - a kernel function -> instruction list ----===//
#include "interpreter/Interpreter.h"
#include "interpreter/Program.h"

#include "dialect/TesselDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cstring>

using namespace mlir;
using namespace ::tessel::interp;
using namespace ::tessel::interp::detail;

namespace {

std::string printType(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}

std::string locationText(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return (file.getFilename().str() + ":" + std::to_string(file.getLine()) + ":" +
            std::to_string(file.getColumn()));
  return "";
}

llvm::Error failure(Operation *op, const llvm::Twine &message) {
  std::string where = locationText(op->getLoc());
  return llvm::createStringError((where.empty() ? "" : where + ": ") + "error: " + message.str());
}

class Compiler {
public:
  explicit Compiler(Program &program) : p(program) {}

  llvm::Error compileFunction(func::FuncOp func);

private:
  Program &p;
  llvm::DenseMap<Value, uint32_t> slots;
  llvm::DenseMap<Location, uint32_t> locs;

  llvm::Expected<uint32_t> newSlot(Type type, Operation *where);
  uint32_t slot(Value v) { return slots.lookup(v); }
  uint32_t location(Location loc);
  Instr &emit(Opcode op, Operation *where);
  llvm::Error define(Value v, Operation *where);
  llvm::Error compileBlock(Block &block);
  llvm::Error compileOp(Operation *op);
  llvm::Error compileConstant(arith::ConstantOp op);
  llvm::Error compileFor(scf::ForOp op);
  llvm::Error compileIf(scf::IfOp op);
  llvm::Error elementwise(Operation *op, Opcode code);
  llvm::Error compileAtomic(Operation *op);
};

std::string attrText(Operation *op, StringRef name);

llvm::Expected<uint32_t> Compiler::newSlot(Type type, Operation *where) {
  Slot s;
  s.typeName = printType(type);
  Type elem = type;
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    elem = tensor.getElementType();
    int64_t size = 1;
    for (int64_t d : tensor.getShape()) {
      if (d < 0)
        return failure(where, "dynamic tile shape " + s.typeName);
      s.shape.push_back(d);
      size *= d;
    }
    if (size > (int64_t(1) << 28))
      return failure(where, "tile " + s.typeName + " is too large to interpret");
    s.size = uint32_t(size);
  }
  auto classify = [&](Type t, Elem &e, uint8_t &bits) -> bool {
    if (t.isF16())
      e = Elem::F16, bits = 16;
    else if (t.isBF16())
      e = Elem::BF16, bits = 16;
    else if (t.isF32())
      e = Elem::F32, bits = 32;
    else if (t.isF64())
      e = Elem::F64, bits = 64;
    else if (t.isIndex())
      e = Elem::Int, bits = 64;
    else if (auto i = dyn_cast<IntegerType>(t); i && i.getWidth() <= 64)
      e = Elem::Int, bits = uint8_t(i.getWidth());
    else if (isa<mlir::tessel::PtrType>(t))
      e = Elem::Ptr, bits = 64;
    else
      return false;
    return true;
  };
  if (!classify(elem, s.elem, s.bits))
    return failure(where, "the interpreter does not support values of type " + s.typeName);
  if (auto ptr = dyn_cast<mlir::tessel::PtrType>(elem)) {
    uint8_t bits = 0;
    if (!classify(ptr.getPointeeType(), s.pointee, bits))
      return failure(where, "unsupported pointee type in " + s.typeName);
    s.pointeeBits = bits;
  }
  s.store = storeOf(s.elem);
  switch (s.store) {
  case Store::F32:
    s.offset = uint32_t(p.f32Init.size());
    p.f32Init.resize(p.f32Init.size() + s.size, 0.0f);
    break;
  case Store::F64:
    s.offset = uint32_t(p.f64Init.size());
    p.f64Init.resize(p.f64Init.size() + s.size, 0.0);
    break;
  case Store::I64:
    s.offset = uint32_t(p.i64Init.size());
    p.i64Init.resize(p.i64Init.size() + s.size, 0);
    break;
  }
  p.maxSize = std::max<size_t>(p.maxSize, s.size);
  p.slots.push_back(std::move(s));
  return uint32_t(p.slots.size() - 1);
}

uint32_t Compiler::location(Location loc) {
  auto [it, inserted] = locs.try_emplace(loc, uint32_t(p.locations.size()));
  if (inserted)
    p.locations.push_back(locationText(loc));
  return it->second;
}

Instr &Compiler::emit(Opcode op, Operation *where) {
  Instr in;
  in.op = op;
  in.loc = location(where->getLoc());
  p.code.push_back(std::move(in));
  return p.code.back();
}

llvm::Error Compiler::define(Value v, Operation *where) {
  auto s = newSlot(v.getType(), where);
  if (!s)
    return s.takeError();
  slots[v] = *s;
  return llvm::Error::success();
}

llvm::Error Compiler::compileFunction(func::FuncOp func) {
  p.name = func.getName().str();
  if (func.getBody().empty())
    return failure(func, "kernel '" + p.name + "' has no body");
  if (!func.getBody().hasOneBlock())
    return failure(func, "kernel '" + p.name + "' has more than one block");
  Block &entry = func.getBody().front();
  for (BlockArgument arg : entry.getArguments()) {
    if (isa<RankedTensorType>(arg.getType()))
      return failure(func, "kernel parameters must be scalars or pointers, got " +
                               printType(arg.getType()));
    if (auto e = define(arg, func))
      return e;
    p.argSlots.push_back(slot(arg));
  }
  if (auto e = compileBlock(entry))
    return e;
  emit(Opcode::Return, func);
  return llvm::Error::success();
}

llvm::Error Compiler::compileBlock(Block &block) {
  for (Operation &op : block)
    if (auto e = compileOp(&op))
      return e;
  return llvm::Error::success();
}

llvm::Error Compiler::elementwise(Operation *op, Opcode code) {
  if (auto e = define(op->getResult(0), op))
    return e;
  Instr &in = emit(code, op);
  in.res = slot(op->getResult(0));
  unsigned n = op->getNumOperands();
  if (n > 0)
    in.a = slot(op->getOperand(0));
  if (n > 1)
    in.b = slot(op->getOperand(1));
  if (n > 2)
    in.c = slot(op->getOperand(2));
  return llvm::Error::success();
}

llvm::Error Compiler::compileConstant(arith::ConstantOp op) {
  if (auto e = define(op.getResult(), op))
    return e;
  const Slot &s = p.slots[slot(op.getResult())];
  Attribute value = op.getValue();
  auto fill = [&](size_t i, Attribute a) {
    if (auto f = dyn_cast<FloatAttr>(a)) {
      double d = f.getValueAsDouble();
      if (s.store == Store::F32)
        p.f32Init[s.offset + i] = float(d);
      else
        p.f64Init[s.offset + i] = d;
    } else if (auto n = dyn_cast<IntegerAttr>(a)) {
      APInt v = n.getValue();
      p.i64Init[s.offset + i] = v.getBitWidth() == 1 ? (v.isZero() ? 0 : -1) : v.getSExtValue();
    }
  };
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (dense.isSplat()) {
      Attribute a = dense.getSplatValue<Attribute>();
      for (size_t i = 0; i < s.size; ++i)
        fill(i, a);
    } else {
      size_t i = 0;
      for (Attribute a : dense.getValues<Attribute>())
        fill(i++, a);
    }
    return llvm::Error::success();
  }
  if (!isa<FloatAttr, IntegerAttr>(value))
    return failure(op, "unsupported constant");
  fill(0, value);
  return llvm::Error::success();
}

llvm::Error Compiler::compileFor(scf::ForOp op) {
  // iv = lb, results = inits; check: iv < ub ? iters = results : exit;
  // body; next: results = yields, iv += step, jump to check.
  Block &body = *op.getBody();
  if (auto e = define(op.getInductionVar(), op))
    return e;
  for (auto [arg, res] : llvm::zip(op.getRegionIterArgs(), op.getResults())) {
    if (auto e = define(arg, op))
      return e;
    if (auto e = define(res, op))
      return e;
  }
  Instr &init = emit(Opcode::ForInit, op);
  init.res = slot(op.getInductionVar());
  init.a = slot(op.getLowerBound());
  for (auto [v, res] : llvm::zip(op.getInitArgs(), op.getResults())) {
    init.from.push_back(slot(v));
    init.to.push_back(slot(res));
  }
  size_t check = p.code.size();
  {
    Instr &in = emit(Opcode::ForCheck, op);
    in.a = slot(op.getInductionVar());
    in.b = slot(op.getUpperBound());
    in.imm = op.getUnsignedCmp() ? 1 : 0;
    for (auto [res, arg] : llvm::zip(op.getResults(), op.getRegionIterArgs())) {
      in.from.push_back(slot(res));
      in.to.push_back(slot(arg));
    }
  }
  for (Operation &inner : body.without_terminator())
    if (auto e = compileOp(&inner))
      return e;
  auto yield = cast<scf::YieldOp>(body.getTerminator());
  Instr &next = emit(Opcode::ForNext, yield);
  next.a = slot(op.getInductionVar());
  next.b = slot(op.getStep());
  next.target = uint32_t(check);
  for (auto [v, res] : llvm::zip(yield.getOperands(), op.getResults())) {
    next.from.push_back(slot(v));
    next.to.push_back(slot(res));
  }
  p.code[check].target = uint32_t(p.code.size());
  return llvm::Error::success();
}

llvm::Error Compiler::compileIf(scf::IfOp op) {
  for (Value res : op.getResults())
    if (auto e = define(res, op))
      return e;
  size_t branch = p.code.size();
  emit(Opcode::IfBranch, op).a = slot(op.getCondition());
  auto region = [&](Region &r) -> llvm::Expected<size_t> {
    Block &block = r.front();
    for (Operation &inner : block.without_terminator())
      if (auto e = compileOp(&inner))
        return e;
    auto yield = cast<scf::YieldOp>(block.getTerminator());
    Instr &in = emit(Opcode::Yield, yield);
    for (auto [v, res] : llvm::zip(yield.getOperands(), op.getResults())) {
      in.from.push_back(slot(v));
      in.to.push_back(slot(res));
    }
    return p.code.size() - 1;
  };
  auto thenYield = region(op.getThenRegion());
  if (!thenYield)
    return thenYield.takeError();
  p.code[branch].target = uint32_t(p.code.size());
  if (!op.getElseRegion().empty()) {
    auto elseYield = region(op.getElseRegion());
    if (!elseYield)
      return elseYield.takeError();
    p.code[*elseYield].target = uint32_t(p.code.size());
  }
  p.code[*thenYield].target = uint32_t(p.code.size());
  return llvm::Error::success();
}

/// The string value of attribute `name` (a StringAttr, else its printed form), or "".
std::string attrText(Operation *op, StringRef name) {
  Attribute attr = op->getAttr(name);
  if (!attr)
    return "";
  if (auto str = dyn_cast<StringAttr>(attr))
    return str.getValue().str();
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  return text;
}

/// `%old = tessel.atomic_rmw <kind> %ptr, %val[, %mask]` (kind: add, max, min, xchg,
/// and, or, xor; an attribute named "kind"). Elements apply in row-major order.
llvm::Error Compiler::compileAtomic(Operation *op) {
  if (op->getNumOperands() < 2 || op->getNumOperands() > 3 || op->getNumResults() > 1)
    return failure(op, "tessel.atomic_rmw expects operands (ptr, value[, mask])");
  std::string kind = attrText(op, "kind");
  static const char *kinds[] = {"add", "max", "min", "xchg", "and", "or", "xor"};
  int found = -1;
  for (int i = 0; i < 7; ++i) {
    size_t at = kind.find(kinds[i]);
    if (at != std::string::npos && (at + std::strlen(kinds[i]) == kind.size() ||
                                    !std::isalpha((unsigned char)kind[at + std::strlen(kinds[i])])))
      found = i;
  }
  if (found < 0)
    return failure(op, "tessel.atomic_rmw: unknown kind '" + kind + "'");
  if (op->getNumResults() == 1)
    if (auto e = define(op->getResult(0), op))
      return e;
  Instr &in = emit(Opcode::AtomicRMW, op);
  in.pred = uint8_t(found);
  in.res = op->getNumResults() ? slot(op->getResult(0)) : kNoSlot;
  in.a = slot(op->getOperand(0));
  in.b = slot(op->getOperand(1));
  if (op->getNumOperands() == 3)
    in.c = slot(op->getOperand(2));
  return llvm::Error::success();
}

/// Elementwise arith/math ops and their opcodes.
std::optional<Opcode> elementwiseOpcode(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<Opcode>>(op)
      .Case([](arith::AddFOp) { return Opcode::AddF; })
      .Case([](arith::SubFOp) { return Opcode::SubF; })
      .Case([](arith::MulFOp) { return Opcode::MulF; })
      .Case([](arith::DivFOp) { return Opcode::DivF; })
      .Case([](arith::RemFOp) { return Opcode::RemF; })
      .Case([](arith::MaximumFOp) { return Opcode::MaximumF; })
      .Case([](arith::MinimumFOp) { return Opcode::MinimumF; })
      .Case([](arith::MaxNumFOp) { return Opcode::MaxNumF; })
      .Case([](arith::MinNumFOp) { return Opcode::MinNumF; })
      .Case([](arith::NegFOp) { return Opcode::NegF; })
      .Case([](math::PowFOp) { return Opcode::PowF; })
      .Case([](math::Atan2Op) { return Opcode::Atan2; })
      .Case([](math::AbsFOp) { return Opcode::AbsF; })
      .Case([](math::ExpOp) { return Opcode::Exp; })
      .Case([](math::Exp2Op) { return Opcode::Exp2; })
      .Case([](math::LogOp) { return Opcode::Log; })
      .Case([](math::Log2Op) { return Opcode::Log2; })
      .Case([](math::Log1pOp) { return Opcode::Log1p; })
      .Case([](math::ExpM1Op) { return Opcode::Expm1; })
      .Case([](math::SqrtOp) { return Opcode::Sqrt; })
      .Case([](math::RsqrtOp) { return Opcode::Rsqrt; })
      .Case([](math::SinOp) { return Opcode::Sin; })
      .Case([](math::CosOp) { return Opcode::Cos; })
      .Case([](math::TanOp) { return Opcode::Tan; })
      .Case([](math::TanhOp) { return Opcode::Tanh; })
      .Case([](math::ErfOp) { return Opcode::Erf; })
      .Case([](math::FloorOp) { return Opcode::Floor; })
      .Case([](math::CeilOp) { return Opcode::Ceil; })
      .Case([](math::TruncOp) { return Opcode::Trunc; })
      .Case([](math::RoundOp) { return Opcode::Round; })
      .Case([](math::RoundEvenOp) { return Opcode::RoundEven; })
      .Case([](math::FmaOp) { return Opcode::Fma; })
      .Case([](arith::AddIOp) { return Opcode::AddI; })
      .Case([](arith::SubIOp) { return Opcode::SubI; })
      .Case([](arith::MulIOp) { return Opcode::MulI; })
      .Case([](arith::DivSIOp) { return Opcode::DivSI; })
      .Case([](arith::DivUIOp) { return Opcode::DivUI; })
      .Case([](arith::RemSIOp) { return Opcode::RemSI; })
      .Case([](arith::RemUIOp) { return Opcode::RemUI; })
      .Case([](arith::CeilDivSIOp) { return Opcode::CeilDivSI; })
      .Case([](arith::FloorDivSIOp) { return Opcode::FloorDivSI; })
      .Case([](arith::AndIOp) { return Opcode::AndI; })
      .Case([](arith::OrIOp) { return Opcode::OrI; })
      .Case([](arith::XOrIOp) { return Opcode::XOrI; })
      .Case([](arith::ShLIOp) { return Opcode::ShLI; })
      .Case([](arith::ShRSIOp) { return Opcode::ShRSI; })
      .Case([](arith::ShRUIOp) { return Opcode::ShRUI; })
      .Case([](arith::MaxSIOp) { return Opcode::MaxSI; })
      .Case([](arith::MinSIOp) { return Opcode::MinSI; })
      .Case([](arith::MaxUIOp) { return Opcode::MaxUI; })
      .Case([](arith::MinUIOp) { return Opcode::MinUI; })
      .Case([](math::AbsIOp) { return Opcode::AbsI; })
      .Case([](arith::SelectOp) { return Opcode::Select; })
      .Case([](arith::ExtSIOp) { return Opcode::IntCast; })
      .Case([](arith::TruncIOp) { return Opcode::IntCast; })
      .Case([](arith::IndexCastOp) { return Opcode::IntCast; })
      .Case([](arith::ExtUIOp) { return Opcode::ZeroExt; })
      .Case([](arith::IndexCastUIOp) { return Opcode::ZeroExt; })
      .Case([](arith::SIToFPOp) { return Opcode::SIToFP; })
      .Case([](arith::UIToFPOp) { return Opcode::UIToFP; })
      .Case([](arith::FPToSIOp) { return Opcode::FPToSI; })
      .Case([](arith::FPToUIOp) { return Opcode::FPToUI; })
      .Case([](arith::ExtFOp) { return Opcode::FloatCast; })
      .Case([](arith::TruncFOp) { return Opcode::FloatCast; })
      .Case([](mlir::tessel::SplatOp) { return Opcode::Splat; })
      .Case([](mlir::tessel::BroadcastOp) { return Opcode::Broadcast; })
      .Case([](mlir::tessel::TransOp) { return Opcode::Trans; })
      .Case([](mlir::tessel::AddPtrOp) { return Opcode::AddPtr; })
      .Default([](Operation *) { return std::nullopt; });
}

llvm::Error Compiler::compileOp(Operation *op) {
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return compileConstant(constant);
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return compileFor(forOp);
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return compileIf(ifOp);
  if (isa<func::ReturnOp>(op)) {
    emit(Opcode::Return, op);
    return llvm::Error::success();
  }
  if (std::optional<Opcode> code = elementwiseOpcode(op))
    return elementwise(op, *code);
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    if (auto e = elementwise(op, Opcode::CmpI))
      return e;
    p.code.back().pred = uint8_t(cmp.getPredicate());
    return llvm::Error::success();
  }
  if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
    if (auto e = elementwise(op, Opcode::CmpF))
      return e;
    p.code.back().pred = uint8_t(cmp.getPredicate());
    return llvm::Error::success();
  }
  if (auto cast = dyn_cast<arith::BitcastOp>(op)) {
    bool toInt = isa<IntegerType>(getElementTypeOrSelf(cast.getType()));
    return elementwise(op, toInt ? Opcode::BitcastToInt : Opcode::BitcastToFloat);
  }
  if (auto pid = dyn_cast<mlir::tessel::ProgramIdOp>(op)) {
    if (auto e = elementwise(op, Opcode::ProgramId))
      return e;
    p.code.back().imm = int32_t(pid.getAxis());
    return llvm::Error::success();
  }
  if (auto num = dyn_cast<mlir::tessel::NumProgramsOp>(op)) {
    if (auto e = elementwise(op, Opcode::NumPrograms))
      return e;
    p.code.back().imm = int32_t(num.getAxis());
    return llvm::Error::success();
  }
  if (auto range = dyn_cast<mlir::tessel::MakeRangeOp>(op)) {
    // A constant: filled once into the arena image.
    if (auto e = define(range.getResult(), op))
      return e;
    const Slot &s = p.slots[slot(range.getResult())];
    for (uint32_t i = 0; i < s.size; ++i)
      p.i64Init[s.offset + i] = int64_t(range.getStart()) + i;
    return llvm::Error::success();
  }
  if (isa<mlir::tessel::ExpandDimsOp, mlir::tessel::ConvertLayoutOp>(op)) {
    // Same elements in the same (row-major) order: a view of the operand's storage.
    Slot view = p.slots[slot(op->getOperand(0))];
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    view.shape.assign(type.getShape().begin(), type.getShape().end());
    view.typeName = printType(type);
    p.slots.push_back(std::move(view));
    slots[op->getResult(0)] = uint32_t(p.slots.size() - 1);
    return llvm::Error::success();
  }
  if (auto load = dyn_cast<mlir::tessel::LoadOp>(op)) {
    if (auto e = define(load.getResult(), op))
      return e;
    Instr &in = emit(Opcode::Load, op);
    in.res = slot(load.getResult());
    in.a = slot(load.getPtr());
    if (load.getMask())
      in.b = slot(load.getMask());
    if (load.getOther())
      in.c = slot(load.getOther());
    return llvm::Error::success();
  }
  if (auto store = dyn_cast<mlir::tessel::StoreOp>(op)) {
    Instr &in = emit(Opcode::Store, op);
    in.a = slot(store.getPtr());
    in.b = slot(store.getValue());
    if (store.getMask())
      in.c = slot(store.getMask());
    return llvm::Error::success();
  }
  if (auto reduce = dyn_cast<mlir::tessel::ReduceOp>(op)) {
    if (auto e = elementwise(op, Opcode::Reduce))
      return e;
    p.code.back().pred = uint8_t(reduce.getKind());
    p.code.back().imm = int32_t(reduce.getAxis());
    return llvm::Error::success();
  }
  StringRef name = op->getName().getStringRef();
  if (name == "tessel.atomic_rmw")
    return compileAtomic(op);
  if (name == "tessel.print" || name == "tessel.assert") {
    Instr &in = emit(name == "tessel.print" ? Opcode::Print : Opcode::Assert, op);
    for (Value v : op->getOperands())
      in.from.push_back(slot(v));
    in.imm = int32_t(p.strings.size());
    p.strings.push_back(attrText(op, name == "tessel.print" ? "prefix" : "message"));
    return llvm::Error::success();
  }
  if (name == "tessel.dot") {
    // Matched by name: a * b + acc with f32 accumulation (operands a, b, acc).
    if (op->getNumOperands() != 3 || op->getNumResults() != 1)
      return failure(op, "tessel.dot expects operands (a, b, acc) and one result");
    if (auto e = elementwise(op, Opcode::Dot))
      return e;
    auto precision = op->getAttrOfType<StringAttr>("inputPrecision");
    p.code.back().imm = !precision || precision.getValue() == "tf32" ? 1 : 0;
    return llvm::Error::success();
  }
  return failure(op, "the interpreter does not support '" + op->getName().getStringRef().str() +
                         "'");
}

} // namespace

namespace tessel::interp {

llvm::Expected<CompiledKernel> CompiledKernel::compile(func::FuncOp kernel) {
  auto program = std::make_shared<Program>();
  Compiler compiler(*program);
  if (auto e = compiler.compileFunction(kernel))
    return e;
  CompiledKernel result;
  result.program_ = std::move(program);
  return result;
}

llvm::Expected<CompiledKernel> CompiledKernel::compile(ModuleOp module, llvm::StringRef name) {
  func::FuncOp found;
  std::string names;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!name.empty() ? func.getName() == name : func->hasAttr("tessel.kernel")) {
      if (found)
        return llvm::createStringError("the module has several kernels (" + found.getName().str() +
                                       ", " + func.getName().str() + "): name one");
      found = func;
    }
    names += (names.empty() ? "" : ", ") + func.getName().str();
  }
  if (!found)
    return llvm::createStringError(
        (name.empty() ? std::string("no tessel.kernel function")
                      : "no function named '" + name.str() + "'") +
        " in the module (it has: " + (names.empty() ? "none" : names) + ")");
  return compile(found);
}

const std::string &CompiledKernel::name() const { return program_->name; }
size_t CompiledKernel::numParams() const { return program_->argSlots.size(); }
size_t CompiledKernel::numInstructions() const { return program_->code.size(); }

bool CompiledKernel::paramIsPointer(size_t index) const {
  return program_->slots[program_->argSlots[index]].elem == Elem::Ptr;
}

const std::string &CompiledKernel::paramType(size_t index) const {
  return program_->slots[program_->argSlots[index]].typeName;
}

} // namespace tessel::interp
