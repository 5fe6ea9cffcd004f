//===- frontend/Gen.h - the MLIRGen generator (private to frontend/) -------===//
//
// One Generator instance generates one kernel specialisation. Its methods are
// split by concern: GenValue.cpp (values, casts, broadcasting), GenTyping.cpp
// (type names and promotion rules), GenExpr.cpp (operators, indexing),
// GenBuiltins.cpp (calls), GenStmt.cpp (statements, control flow),
// MLIRGen.cpp (the kernel function and the module).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_GEN_H
#define TESSEL_FRONTEND_GEN_H

#include "frontend/AST.h"
#include "frontend/Config.h"
#include "frontend/ConstEval.h"
#include "frontend/Diagnostics.h"

#include "dialect/TesselDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessel::frontend {

/// A value during generation: a compile-time constant, an SSA value (scalar
/// or tile), a tuple, a tensor descriptor, or poison (the result of an expression that
/// already reported an error; operations on poison are silent, so errors don't cascade).
struct GenValue {
  enum class Kind { Poison, Const, Runtime, Tuple, Descriptor };
  Kind kind = Kind::Poison;
  ConstValue cst;
  mlir::Value value;
  /// A tuple's elements; a descriptor's base pointer, then its shape, then its strides
  /// (rank each; GenDescriptor.cpp).
  std::vector<GenValue> elems;
  /// A descriptor's block shape: the tiles its loads give.
  llvm::SmallVector<int64_t, 2> block;

  static GenValue poison() { return GenValue(); }
  static GenValue ofConst(ConstValue c) {
    GenValue v;
    v.kind = Kind::Const;
    v.cst = std::move(c);
    return v;
  }
  static GenValue ofValue(mlir::Value value) {
    GenValue v;
    v.kind = value ? Kind::Runtime : Kind::Poison;
    v.value = value;
    return v;
  }
  static GenValue ofTuple(std::vector<GenValue> elems) {
    GenValue v;
    v.kind = Kind::Tuple;
    v.elems = std::move(elems);
    return v;
  }
  bool isPoison() const { return kind == Kind::Poison; }
  bool isConst() const { return kind == Kind::Const; }
  bool isRuntime() const { return kind == Kind::Runtime; }
  bool isTuple() const { return kind == Kind::Tuple; }
  bool isDescriptor() const { return kind == Kind::Descriptor; }
  /// Several values under one name (a tuple or a descriptor): no arithmetic, no
  /// runtime value of its own.
  bool isAggregate() const { return isTuple() || isDescriptor(); }
  /// Runtime only.
  mlir::Type type() const { return value.getType(); }
  /// Same value (same SSA value or equal constant).
  bool sameAs(const GenValue &other) const;
};

/// The variables of one function body being generated (kernel or inlined @func).
struct Scope {
  const ast::Function *function = nullptr;
  std::map<std::string, GenValue> vars;
  /// Where each variable was last assigned (for notes).
  std::map<std::string, SourceRange> defs;
  /// Variables that went out of scope at the end of a loop body or of one
  /// branch of a runtime `if`, and where they were assigned (for notes).
  std::map<std::string, SourceRange> dropped;
  /// Set by `return` in a @func.
  std::optional<GenValue> returnValue;
  bool returned = false;
  /// Nesting of dynamic control flow (scf.for / scf.if) inside this function.
  unsigned dynamicDepth = 0;
  /// Where this @func was called from (for notes).
  SourceRange callSite;
};

class Generator {
public:
  /// The largest tile (elements) a kernel may create: 2^20, Triton's limit too. A
  /// tile that size is already 8192 registers per thread at 4 warps; its elementwise
  /// code compiles in about 20 s, and larger tiles would take minutes for nothing.
  static constexpr int64_t kMaxTileElements = int64_t(1) << 20;

  Generator(mlir::MLIRContext &context, const ast::Module &module, const Specialization &spec,
            DiagnosticEngine &diags);

  mlir::OwningOpRef<mlir::ModuleOp> generate(const ast::Function &kernel);

  //===--- Errors and locations (MLIRGen.cpp) ------------------------------===//
  /// Reports an error (with notes for the @func call chain); returns poison.
  GenValue error(SourceRange range, const std::string &message);
  Diagnostic &report(SourceRange range, const std::string &message);
  mlir::Location loc(SourceRange range);
  /// The location of the expression being generated.
  mlir::Location curLoc() const { return curLoc_; }

  //===--- Types (GenTyping.cpp) -------------------------------------------===//
  mlir::Type dtypeToType(DType dtype);
  std::optional<DType> typeToDType(mlir::Type elem);
  static bool isFloatElem(mlir::Type elem);
  static bool isIntElem(mlir::Type elem);
  static bool isPtrElem(mlir::Type elem);
  static bool isBoolElem(mlir::Type elem);
  static mlir::Type elemOf(mlir::Type type);
  static llvm::ArrayRef<int64_t> shapeOf(mlir::Type type);
  /// "i32", "*f32", "tile<128x64xf32>", "tile<128x*f32>".
  static std::string typeName(mlir::Type type);
  /// "tile<128x64>" / "scalar".
  static std::string shapeName(llvm::ArrayRef<int64_t> shape);
  /// A description of any value for messages.
  std::string describe(const GenValue &v);
  /// The element type two operands are converted to before an elementwise op
  /// (Python/Triton rules; see docs/language.md, "Typing"). Null when none.
  mlir::Type commonElemType(const GenValue &a, const GenValue &b);
  /// The type a constant gets when it must become a runtime value on its own.
  mlir::Type defaultType(const ConstValue &c);
  /// numpy broadcasting of two shapes; nullopt when incompatible.
  static std::optional<llvm::SmallVector<int64_t>> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                                   llvm::ArrayRef<int64_t> b);

  //===--- Values (GenValue.cpp) -------------------------------------------===//
  /// A scalar arith.constant of `elem` type. A literal whose value the conversion would
  /// change (2.7 or -inf as an integer, 300 as i8, 1e40 as f32) is an error at the
  /// expression being generated (the constant is still made, so generation goes on),
  /// unless the conversion is the user's own (`explicitCast`: `.to(dtype)`).
  mlir::Value constantScalar(const ConstValue &c, mlir::Type elem, bool explicitCast = false);
  /// Why `c` changes value as an `elem`, or "" when it does not.
  std::string literalConversionLoss(const ConstValue &c, mlir::Type elem);
  /// A constant of `type` (a scalar, or a splat tile).
  mlir::Value constantOf(const ConstValue &c, mlir::Type type);
  /// A runtime value: constants get their default type.
  mlir::Value materialize(const GenValue &v, SourceRange range);
  /// Converts the element type (extsi/trunci/sitofp/fptosi/extf/truncf/...).
  /// Null (after an error) for pointer conversions.
  mlir::Value castElem(mlir::Value v, mlir::Type elem, SourceRange range);
  /// A value of element type `elem` from a constant or runtime value.
  mlir::Value toElemType(const GenValue &v, mlir::Type elem, SourceRange range);
  /// Broadcasts (splat / expand_dims / broadcast) to `shape`; the shapes must be
  /// broadcast-compatible.
  mlir::Value broadcastTo(mlir::Value v, llvm::ArrayRef<int64_t> shape);
  /// Broadcasts several values to their common shape; false after a
  /// "shape mismatch" error.
  bool broadcastTogether(llvm::MutableArrayRef<mlir::Value> values, SourceRange range);

  //===--- Expressions (GenExpr.cpp) ---------------------------------------===//
  GenValue genExpr(const ast::Expr &expr);
  GenValue genName(const ast::Expr &expr);
  GenValue genUnary(ast::OpKind op, const GenValue &x, SourceRange range);
  GenValue genBinary(ast::OpKind op, const GenValue &a, const GenValue &b, SourceRange range);
  GenValue genBoolOp(const ast::Expr &expr);
  GenValue genTernary(const ast::Expr &expr);
  GenValue genSubscript(const ast::Expr &expr);
  GenValue genAttribute(const ast::Expr &expr);
  /// `x.to(dtype)`.
  GenValue genCast(const GenValue &x, DType dtype, SourceRange range);
  /// A compile-time value needed by `what`: reports "expected a constexpr" otherwise.
  std::optional<ConstValue> requireConst(const GenValue &v, SourceRange range,
                                         const std::string &what);
  /// A constexpr int (e.g. an axis or a bound).
  std::optional<int64_t> requireConstInt(const GenValue &v, SourceRange range,
                                         const std::string &what);

  //===--- Calls (GenCall.cpp) ---------------------------------------------===//
  GenValue genCall(const ast::Expr &expr);
  GenValue genMethodCall(const ast::Expr &expr);
  /// `"a tuple"` / `"a tensor descriptor"`, for errors about aggregates.
  static const char *aggregateName(const GenValue &v);
  GenValue callFunc(const ast::Function &fn, const ast::Expr &call);
  /// Binds a call's positional and keyword arguments to named parameters; false after
  /// reporting a count or keyword error.
  bool bindArgs(const ast::Expr &call, const std::string &fname,
                const std::vector<const char *> &names, size_t required,
                std::vector<const ast::Expr *> &out);

  //===--- Built-ins (GenBuiltins.cpp): one handler each, found by name ----===//
  struct BuiltinCall;
  using BuiltinHandler = GenValue (Generator::*)(BuiltinCall &call);
  /// The handler of the built-in `name`, or null.
  static BuiltinHandler findBuiltin(const std::string &name);
  static bool isBuiltinName(const std::string &name) { return findBuiltin(name) != nullptr; }
  GenValue genProgramId(BuiltinCall &call); // program_id, num_programs
  GenValue genArange(BuiltinCall &call);
  GenValue genFull(BuiltinCall &call);      // zeros, full
  GenValue genLoad(BuiltinCall &call);
  GenValue genStore(BuiltinCall &call);  // store, atomic_add
  /// The cores of load() and store() once their operands are generated (shared with a
  /// descriptor's methods, whose parameters put other/shared and value at the same indices).
  GenValue loadFrom(BuiltinCall &call, const GenValue &ptr, const GenValue &mask,
                    const GenValue &other, const GenValue &shared);
  GenValue storeTo(BuiltinCall &call, const GenValue &ptr, const GenValue &value,
                   const GenValue &mask);
  GenValue genWhere(BuiltinCall &call);
  GenValue genMinMax(BuiltinCall &call);    // maximum, minimum
  GenValue genMath(BuiltinCall &call);      // exp, exp2, log, log2, sqrt, rsqrt, sigmoid, abs, tanh
  GenValue genReduce(BuiltinCall &call);    // sum, max, min
  GenValue genCdiv(BuiltinCall &call);
  GenValue genStaticAssert(BuiltinCall &call);
  GenValue genDot(BuiltinCall &call);
  GenValue genTrans(BuiltinCall &call);
  GenValue genRangeOutsideFor(BuiltinCall &call);
  bool checkPointerOperand(BuiltinCall &call, const GenValue &ptr);

  //===--- Tensor descriptors (GenDescriptor.cpp) ---------------------------===//
  GenValue genMakeTensorDescriptor(BuiltinCall &call);
  /// desc.load(offsets, ...) and desc.store(offsets, value, ...).
  GenValue genDescriptorMethod(const ast::Expr &call, const GenValue &desc);
  /// desc.shape, desc.strides, desc.block_shape, desc.dtype.
  GenValue genDescriptorAttribute(const ast::Expr &expr, const GenValue &desc);
  /// boundary_check's dimensions (nullopt after an error at `range`).
  std::optional<std::vector<bool>> checkedDimensions(const GenValue &checkV, size_t rank,
                                                     SourceRange range);
  /// The pointers of the block at `offsets` and the mask of its `checked` dimensions (None:
  /// no dimension checked).
  std::pair<GenValue, GenValue> descriptorBlock(const GenValue &desc,
                                                llvm::ArrayRef<GenValue> offsets,
                                                const std::vector<bool> &checked, SourceRange range);
  bool maskOperand(BuiltinCall &call, const GenValue &mask, size_t index, mlir::Value &out);

  //===--- Statements (GenStmt.cpp) ----------------------------------------===//
  void genBlock(const std::vector<ast::StmtPtr> &body);
  void genStmt(const ast::Stmt &stmt);
  void genAssign(const ast::Stmt &stmt);
  void genIf(const ast::Stmt &stmt);
  void genDynamicIf(const ast::Stmt &stmt, mlir::Value cond);
  void genFor(const ast::Stmt &stmt);
  void genReturn(const ast::Stmt &stmt);
  void bind(const std::string &name, GenValue value, SourceRange range);
  /// The module constant `name` (evaluated in order on first use, each seeing the ones
  /// before it): nullptr when there is none; a poison value when its value is not a
  /// compile-time constant (reported at its definition).
  const GenValue *moduleConstant(const std::string &name);

  mlir::MLIRContext &ctx;
  mlir::OpBuilder b;
  const ast::Module &module;
  const Specialization &spec;
  DiagnosticEngine &diags;
  std::unique_ptr<Scope> kernelScope_;
  Scope *scope = nullptr;
  std::vector<Scope *> callStack;
  /// @func calls inlined so far for this kernel (bounded: fan-out grows exponentially).
  size_t inlinedCalls = 0;
  bool inlineDepthReported = false;
  mlir::Location curLoc_;
  std::map<std::string, GenValue> moduleConstants_;
  bool moduleConstantsEvaluated_ = false;
  /// The source range of the expression being generated (for errors without one).
  SourceRange curRange_;
};

/// One call of a built-in while its code is generated: the call, the built-in's name, the
/// arguments bound to its parameters, and where it is.
struct Generator::BuiltinCall {
  Generator &gen;
  const ast::Expr &expr;
  const std::string &name;
  mlir::Location loc;
  std::vector<const ast::Expr *> args;

  /// Binds the arguments to `names`, the first `required` of them mandatory.
  bool bind(const std::vector<const char *> &names, size_t required) {
    return gen.bindArgs(expr, name, names, required, args);
  }
  /// Argument i, generated (a missing optional one is None).
  GenValue arg(size_t i) {
    return args[i] ? gen.genExpr(*args[i]) : GenValue::ofConst(ConstValue::none());
  }
  SourceRange argRange(size_t i) const { return args[i] ? args[i]->range : expr.range; }
};

/// Sets the generator's current location for the lifetime of the guard.
class LocGuard {
public:
  LocGuard(Generator &gen, SourceRange range)
      : gen_(gen), saved_(gen.curLoc_), savedRange_(gen.curRange_) {
    gen.curLoc_ = gen.loc(range);
    gen.curRange_ = range;
  }
  ~LocGuard() {
    gen_.curLoc_ = saved_;
    gen_.curRange_ = savedRange_;
  }

private:
  Generator &gen_;
  mlir::Location saved_;
  SourceRange savedRange_;
};

} // namespace tessel::frontend

#endif // TESSEL_FRONTEND_GEN_H
