//===- frontend/GenStmt.cpp - statements and control flow ------------------===//
//
// A constexpr `if` generates only the taken branch. A runtime `if` becomes
// scf.if, yielding the variables assigned in it that live on after it. A `for`
// becomes scf.for; variables defined before the loop and assigned in its body
// are its iter_args and must keep their type.
//
//===----------------------------------------------------------------------===//
#include "frontend/Gen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <set>

namespace tessel::frontend {

using ast::Stmt;
using ast::StmtKind;
using mlir::Type;
using mlir::Value;

void Generator::bind(const std::string &name, GenValue value, SourceRange range) {
  scope->vars[name] = std::move(value);
  scope->defs[name] = range;
}

void Generator::genBlock(const std::vector<ast::StmtPtr> &body) {
  for (const ast::StmtPtr &stmt : body) {
    if (scope->returned)
      return;
    genStmt(*stmt);
  }
}

void Generator::genStmt(const Stmt &stmt) {
  LocGuard guard(*this, stmt.range);
  switch (stmt.kind) {
  case StmtKind::Assign:
  case StmtKind::AugAssign: genAssign(stmt); return;
  case StmtKind::ExprStmt: {
    GenValue v = genExpr(*stmt.value);
    (void)v;
    return;
  }
  case StmtKind::If: genIf(stmt); return;
  case StmtKind::For: genFor(stmt); return;
  case StmtKind::Return: genReturn(stmt); return;
  case StmtKind::Pass: return;
  }
}

void Generator::genAssign(const Stmt &stmt) {
  const ast::Expr &target = *stmt.targets[0];
  if (stmt.kind == StmtKind::AugAssign) {
    GenValue cur = genName(target);
    GenValue rhs = genExpr(*stmt.value);
    bind(target.name, genBinary(stmt.op, cur, rhs, stmt.range), target.range);
    return;
  }
  GenValue value = genExpr(*stmt.value);
  if (target.kind == ast::ExprKind::Name) {
    bind(target.name, value, target.range);
    return;
  }
  // Tuple unpacking: a, b = f(x)
  size_t n = target.args.size();
  if (!value.isPoison() && (!value.isTuple() || value.elems.size() != n)) {
    error(stmt.range, "cannot unpack " +
                          (value.isTuple() ? std::to_string(value.elems.size()) + " values"
                                           : describe(value)) +
                          " into " + std::to_string(n) + " names");
    value = GenValue::poison();
  }
  for (size_t i = 0; i < n; ++i)
    bind(target.args[i]->name, value.isTuple() ? value.elems[i] : GenValue::poison(),
         target.args[i]->range);
}

void Generator::genReturn(const Stmt &stmt) {
  if (scope->function->kind == ast::FunctionKind::Kernel) {
    if (stmt.value) {
      error(stmt.range, "a @kernel cannot return a value (store results through a pointer)");
      return;
    }
    if (scope->dynamicDepth > 0) {
      error(stmt.range, "'return' inside a runtime 'if' or a 'for' is not supported");
      return;
    }
    scope->returned = true;
    return;
  }
  if (scope->dynamicDepth > 0) {
    error(stmt.range, "'return' inside a runtime 'if' or a 'for' is not supported; assign to a "
                      "variable and return it at the end");
    return;
  }
  scope->returnValue = stmt.value ? genExpr(*stmt.value) : GenValue::ofConst(ConstValue::none());
  scope->returned = true;
}

/// Names assigned anywhere in `body` (assignment targets and loop variables).
static void collectAssigned(const std::vector<ast::StmtPtr> &body, std::set<std::string> &out) {
  for (const ast::StmtPtr &s : body) {
    switch (s->kind) {
    case StmtKind::Assign:
    case StmtKind::AugAssign:
      if (s->targets[0]->kind == ast::ExprKind::Name)
        out.insert(s->targets[0]->name);
      else
        for (const ast::ExprPtr &t : s->targets[0]->args)
          out.insert(t->name);
      break;
    case StmtKind::For:
      out.insert(s->var);
      collectAssigned(s->body, out);
      break;
    case StmtKind::If:
      collectAssigned(s->body, out);
      collectAssigned(s->orelse, out);
      break;
    default: break;
    }
  }
}

void Generator::genIf(const Stmt &stmt) {
  GenValue cond = genExpr(*stmt.cond);
  if (cond.isPoison())
    return;
  if (cond.isConst()) {
    genBlock(cond.cst.truthy() ? stmt.body : stmt.orelse);
    return;
  }
  if (cond.isAggregate()) {
    error(stmt.cond->range, std::string(aggregateName(cond)) + " cannot be used as a condition");
    return;
  }
  if (!shapeOf(cond.type()).empty()) {
    error(stmt.cond->range, "the condition of 'if' must be a scalar, got " +
                                typeName(cond.type()) + "; use where() for tiles");
    return;
  }
  if (isPtrElem(cond.type())) {
    error(stmt.cond->range, "a pointer cannot be used as a condition");
    return;
  }
  Value c = castElem(cond.value, b.getI1Type(), stmt.cond->range);
  if (c)
    genDynamicIf(stmt, c);
}

void Generator::genDynamicIf(const Stmt &stmt, Value cond) {
  mlir::Location l = curLoc();
  auto ifOp = mlir::scf::IfOp::create(b, l, mlir::TypeRange{}, cond, /*withElseRegion=*/true);
  std::map<std::string, GenValue> before = scope->vars;
  std::map<std::string, SourceRange> defsBefore = scope->defs;

  auto genBranch = [&](mlir::Block *block, const std::vector<ast::StmtPtr> &body) {
    scope->vars = before;
    b.setInsertionPoint(block->getTerminator());
    ++scope->dynamicDepth;
    genBlock(body);
    --scope->dynamicDepth;
    return scope->vars;
  };
  mlir::OpBuilder::InsertionGuard insertGuard(b);
  std::map<std::string, GenValue> thenVars = genBranch(ifOp.thenBlock(), stmt.body);
  std::map<std::string, SourceRange> thenDefs = scope->defs;
  std::map<std::string, GenValue> elseVars = genBranch(ifOp.elseBlock(), stmt.orelse);

  // Variables that live on after the if, and their value in each branch.
  struct Result {
    std::string name;
    GenValue thenV, elseV;
    Type type;
  };
  std::vector<Result> results;
  std::map<std::string, GenValue> after = before;
  std::set<std::string> names;
  for (const auto &kv : thenVars)
    names.insert(kv.first);
  for (const auto &kv : elseVars)
    names.insert(kv.first);
  for (const std::string &name : names) {
    bool inBefore = before.count(name), inThen = thenVars.count(name), inElse = elseVars.count(name);
    if (!inBefore && !(inThen && inElse))
      continue; // local to one branch
    GenValue t = inThen ? thenVars[name] : before[name];
    GenValue e = inElse ? elseVars[name] : before[name];
    if (t.isPoison() || e.isPoison()) {
      after[name] = GenValue::poison();
      continue;
    }
    if (t.sameAs(e)) {
      after[name] = t;
      continue;
    }
    SourceRange where = thenDefs.count(name) ? thenDefs[name] : stmt.range;
    if (t.isAggregate() || e.isAggregate() || (t.isConst() && !t.cst.isNumber()) ||
        (e.isConst() && !e.cst.isNumber())) {
      error(where, "variable '" + name + "' gets different compile-time values (" + describe(t) +
                       " and " + describe(e) + ") in the branches of a runtime 'if'");
      after[name] = GenValue::poison();
      continue;
    }
    Type type;
    if (t.isRuntime() && e.isRuntime()) {
      if (t.type() != e.type()) {
        error(where, "variable '" + name + "' is " + typeName(t.type()) +
                         " in one branch of the 'if' and " + typeName(e.type()) +
                         " in the other");
        after[name] = GenValue::poison();
        continue;
      }
      type = t.type();
    } else if (t.isRuntime()) {
      type = t.type();
    } else if (e.isRuntime()) {
      type = e.type();
    } else {
      type = commonElemType(t, e);
    }
    results.push_back(Result{name, t, e, type});
  }

  // Yields, converting constants to the result type inside each branch.
  auto yieldValues = [&](mlir::Block *block, bool isThen) {
    b.setInsertionPoint(block->getTerminator());
    llvm::SmallVector<Value> values;
    for (const Result &r : results) {
      const GenValue &v = isThen ? r.thenV : r.elseV;
      values.push_back(v.isRuntime() ? v.value : constantOf(v.cst, r.type));
    }
    block->getTerminator()->erase();
    b.setInsertionPointToEnd(block);
    mlir::scf::YieldOp::create(b, l, values);
  };
  yieldValues(ifOp.thenBlock(), true);
  yieldValues(ifOp.elseBlock(), false);

  llvm::SmallVector<Type> types;
  for (const Result &r : results)
    types.push_back(r.type);
  b.setInsertionPoint(ifOp);
  auto newIf = mlir::scf::IfOp::create(b, l, types, cond, /*withElseRegion=*/true);
  newIf.getThenRegion().takeBody(ifOp.getThenRegion());
  newIf.getElseRegion().takeBody(ifOp.getElseRegion());
  ifOp.erase();
  for (size_t i = 0; i < results.size(); ++i)
    after[results[i].name] = GenValue::ofValue(newIf.getResult(i));
  for (const auto *branch : {&thenVars, &elseVars})
    for (const auto &kv : *branch)
      if (!after.count(kv.first))
        scope->dropped[kv.first] = thenDefs.count(kv.first) ? thenDefs[kv.first] : stmt.range;
  scope->vars = after;
  for (const auto &kv : thenDefs)
    if (after.count(kv.first) && !defsBefore.count(kv.first))
      defsBefore[kv.first] = kv.second;
  scope->defs = defsBefore;
}

void Generator::genFor(const Stmt &stmt) {
  const ast::Expr &call = *stmt.value;
  // range(stop) | range(start, stop) | range(start, stop, step)
  std::vector<GenValue> bounds;
  for (size_t i = 1; i < call.args.size(); ++i)
    bounds.push_back(genExpr(*call.args[i]));
  for (const GenValue &v : bounds)
    if (v.isPoison())
      return;
  GenValue start = bounds.size() >= 2 ? bounds[0] : GenValue::ofConst(ConstValue::ofInt(0));
  GenValue stop = bounds.size() >= 2 ? bounds[1] : bounds[0];
  GenValue step = bounds.size() == 3 ? bounds[2] : GenValue::ofConst(ConstValue::ofInt(1));
  SourceRange stopRange = call.args[bounds.size() >= 2 ? 2 : 1]->range;
  GenValue parts[3] = {start, stop, step};
  SourceRange ranges[3] = {bounds.size() >= 2 ? call.args[1]->range : call.range, stopRange,
                           bounds.size() == 3 ? call.args[3]->range : call.range};
  Type indexType = b.getI32Type();
  for (int i = 0; i < 3; ++i) {
    const GenValue &v = parts[i];
    bool ok = v.isConst() ? (v.cst.isInt() || v.cst.isBool())
                          : v.isRuntime() && shapeOf(v.type()).empty() && isIntElem(v.type());
    if (!ok) {
      error(ranges[i], "range() bounds must be integer scalars, got " + describe(v));
      return;
    }
    if (v.isRuntime() && v.type().getIntOrFloatBitWidth() == 64)
      indexType = b.getI64Type();
    if (v.isConst() && (v.cst.intValue < INT32_MIN || v.cst.intValue > INT32_MAX))
      indexType = b.getI64Type();
  }
  if (step.isConst() && step.cst.intValue <= 0) {
    error(ranges[2], step.cst.intValue == 0 ? "range() step must not be zero"
                                            : "range() with a negative step is not supported");
    return;
  }
  Value lb = toElemType(start, indexType, ranges[0]);
  Value ub = toElemType(stop, indexType, ranges[1]);
  Value st = toElemType(step, indexType, ranges[2]);
  if (!lb || !ub || !st)
    return;

  // Loop-carried variables: defined before the loop and assigned in its body.
  std::set<std::string> assigned;
  collectAssigned(stmt.body, assigned);
  assigned.erase(stmt.var);
  std::vector<std::string> carried;
  llvm::SmallVector<Value> inits;
  for (const std::string &name : assigned) {
    auto it = scope->vars.find(name);
    if (it == scope->vars.end() || it->second.isPoison())
      continue;
    const GenValue &v = it->second;
    if (v.isAggregate() || (v.isConst() && !v.cst.isNumber())) {
      Diagnostic &d = report(stmt.range, "variable '" + name + "' (" + describe(v) +
                                             ") is assigned in the loop; only numbers and "
                                             "tiles can change inside a loop");
      DiagnosticEngine::note(d, scope->defs[name], "defined here");
      continue;
    }
    Value init = materialize(v, scope->defs[name]);
    if (!init)
      continue;
    carried.push_back(name);
    inits.push_back(init);
  }

  mlir::Location l = curLoc();
  auto forOp = mlir::scf::ForOp::create(b, l, lb, ub, st, inits);
  std::map<std::string, GenValue> before = scope->vars;
  std::map<std::string, SourceRange> defsBefore = scope->defs;
  mlir::Block *body = forOp.getBody();
  {
    mlir::OpBuilder::InsertionGuard insertGuard(b);
    if (!body->empty() && body->back().hasTrait<mlir::OpTrait::IsTerminator>())
      body->back().erase();
    b.setInsertionPointToEnd(body);
    scope->vars[stmt.var] = GenValue::ofValue(forOp.getInductionVar());
    scope->defs[stmt.var] = stmt.varRange;
    for (size_t i = 0; i < carried.size(); ++i)
      scope->vars[carried[i]] = GenValue::ofValue(forOp.getRegionIterArgs()[i]);
    ++scope->dynamicDepth;
    genBlock(stmt.body);
    --scope->dynamicDepth;
    llvm::SmallVector<Value> yields;
    for (size_t i = 0; i < carried.size(); ++i) {
      Value arg = forOp.getRegionIterArgs()[i];
      const GenValue &v = scope->vars[carried[i]];
      Value y = arg;
      if (v.isConst() && v.cst.isNumber()) {
        y = constantOf(v.cst, arg.getType());
      } else if (v.isRuntime()) {
        if (v.type() == arg.getType()) {
          y = v.value;
        } else {
          Diagnostic &d = report(scope->defs[carried[i]],
                                 "loop-carried variable '" + carried[i] + "' changes type in the "
                                 "loop: " + typeName(arg.getType()) + " before the loop, " +
                                 typeName(v.type()) + " after an iteration");
          DiagnosticEngine::note(d, defsBefore[carried[i]],
                                 "initialised here; give it the loop's type (e.g. zeros(shape, "
                                 "dtype) or .to(dtype))");
        }
      } else if (!v.isPoison()) {
        report(scope->defs[carried[i]], "loop-carried variable '" + carried[i] +
                                            "' cannot become " + describe(v) + " in the loop");
      }
      yields.push_back(y);
    }
    mlir::scf::YieldOp::create(b, l, yields);
  }
  for (const auto &kv : scope->vars)
    if (!before.count(kv.first))
      scope->dropped[kv.first] = scope->defs.count(kv.first) ? scope->defs[kv.first] : stmt.range;
  scope->vars = before;
  scope->defs = defsBefore;
  for (size_t i = 0; i < carried.size(); ++i)
    scope->vars[carried[i]] = GenValue::ofValue(forOp.getResult(i));
}

} // namespace tessel::frontend
