//===- frontend/AST.cpp - syntax tree helpers ------------------------------===//
#include "frontend/AST.h"

namespace tessel::frontend::ast {

const char *opSpelling(OpKind op) {
  switch (op) {
  case OpKind::None: return "?";
  case OpKind::Neg: return "-";
  case OpKind::Pos: return "+";
  case OpKind::Not: return "not";
  case OpKind::Invert: return "~";
  case OpKind::Add: return "+";
  case OpKind::Sub: return "-";
  case OpKind::Mul: return "*";
  case OpKind::Div: return "/";
  case OpKind::FloorDiv: return "//";
  case OpKind::Mod: return "%";
  case OpKind::Pow: return "**";
  case OpKind::BitAnd: return "&";
  case OpKind::BitOr: return "|";
  case OpKind::BitXor: return "^";
  case OpKind::Lt: return "<";
  case OpKind::Le: return "<=";
  case OpKind::Gt: return ">";
  case OpKind::Ge: return ">=";
  case OpKind::Eq: return "==";
  case OpKind::Ne: return "!=";
  case OpKind::And: return "and";
  case OpKind::Or: return "or";
  }
  return "?";
}

const Keyword *Expr::keyword(const std::string &key) const {
  for (const Keyword &kw : keywords)
    if (kw.name == key)
      return &kw;
  return nullptr;
}

const Param *Function::param(const std::string &paramName) const {
  for (const Param &p : params)
    if (p.name == paramName)
      return &p;
  return nullptr;
}

const Function *Module::function(const std::string &name) const {
  for (const auto &f : functions)
    if (f->name == name)
      return f.get();
  return nullptr;
}

const Constant *Module::constant(const std::string &name) const {
  for (const Constant &c : constants)
    if (c.name == name)
      return &c;
  return nullptr;
}

} // namespace tessel::frontend::ast
