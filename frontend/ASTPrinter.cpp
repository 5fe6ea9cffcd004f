//===- frontend/ASTPrinter.cpp - readable dumps of the syntax tree ---------===//
#include "frontend/ASTPrinter.h"

#include <cstdio>

namespace tessel::frontend {
namespace {

using namespace ast;

std::string formatFloat(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eni") == std::string::npos)
    s += ".0";
  return s;
}

std::string quote(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

class Printer {
public:
  std::string out;
  FileNames fileNames;

  /// <line:col> in the compiled file, <file:line:col> in an imported one.
  std::string loc(SourceRange r) const {
    std::string file = r.begin.file != 0 && fileNames ? fileNames(r.begin.file) + ":" : "";
    return "<" + file + std::to_string(r.begin.line) + ":" + std::to_string(r.begin.col) + ">";
  }

  void line(unsigned indent, const std::string &text) {
    out.append(indent * 2, ' ');
    out += text;
    out += '\n';
  }

  void expr(unsigned indent, const Expr &e) {
    switch (e.kind) {
    case ExprKind::Int: line(indent, "Int " + std::to_string(e.intValue)); return;
    case ExprKind::Float: line(indent, "Float " + formatFloat(e.floatValue)); return;
    case ExprKind::Bool: line(indent, e.intValue ? "Bool True" : "Bool False"); return;
    case ExprKind::None: line(indent, "None"); return;
    case ExprKind::String: line(indent, "String " + quote(e.name)); return;
    case ExprKind::Name: line(indent, "Name " + e.name); return;
    case ExprKind::Slice: line(indent, "Slice :"); return;
    case ExprKind::Unary: line(indent, std::string("Unary ") + opSpelling(e.op)); break;
    case ExprKind::Binary: line(indent, std::string("Binary ") + opSpelling(e.op)); break;
    case ExprKind::BoolOp: line(indent, std::string("BoolOp ") + opSpelling(e.op)); break;
    case ExprKind::Ternary: line(indent, "Ternary (value, condition, else)"); break;
    case ExprKind::Attribute: line(indent, "Attribute ." + e.name); break;
    case ExprKind::Subscript: line(indent, "Subscript"); break;
    case ExprKind::List: line(indent, "List"); break;
    case ExprKind::Tuple: line(indent, "Tuple"); break;
    case ExprKind::Comprehension: line(indent, "Comprehension"); break;
    case ExprKind::CompFor: line(indent, "For (target, iterable)"); break;
    case ExprKind::CompIf: line(indent, "If"); break;
    case ExprKind::Call:
      if (e.args[0]->kind == ExprKind::Name) {
        line(indent, "Call " + e.args[0]->name);
        for (size_t i = 1; i < e.args.size(); ++i)
          expr(indent + 1, *e.args[i]);
      } else {
        line(indent, "Call");
        for (const ExprPtr &a : e.args)
          expr(indent + 1, *a);
      }
      for (const Keyword &kw : e.keywords) {
        line(indent + 1, "Keyword " + kw.name);
        expr(indent + 2, *kw.value);
      }
      return;
    }
    for (const ExprPtr &a : e.args)
      expr(indent + 1, *a);
  }

  void block(unsigned indent, const std::vector<StmtPtr> &body) {
    for (const StmtPtr &s : body)
      stmt(indent, *s);
  }

  void stmt(unsigned indent, const Stmt &s) {
    switch (s.kind) {
    case StmtKind::Assign:
      line(indent, "Assign " + exprToString(*s.targets[0]) + " " + loc(s.range));
      expr(indent + 1, *s.value);
      return;
    case StmtKind::AugAssign:
      line(indent, "AugAssign " + exprToString(*s.targets[0]) + " " + opSpelling(s.op) + "= " +
                       loc(s.range));
      expr(indent + 1, *s.value);
      return;
    case StmtKind::ExprStmt:
      line(indent, "ExprStmt " + loc(s.range));
      expr(indent + 1, *s.value);
      return;
    case StmtKind::If:
      line(indent, std::string(s.isElif ? "Elif " : "If ") + loc(s.range));
      expr(indent + 1, *s.cond);
      line(indent + 1, "Then");
      block(indent + 2, s.body);
      if (!s.orelse.empty()) {
        if (s.orelse.size() == 1 && s.orelse[0]->isElif) {
          stmt(indent + 1, *s.orelse[0]);
        } else {
          line(indent + 1, "Else");
          block(indent + 2, s.orelse);
        }
      }
      return;
    case StmtKind::For:
      line(indent, "For " + s.var + " " + loc(s.range));
      expr(indent + 1, *s.value);
      line(indent + 1, "Body");
      block(indent + 2, s.body);
      return;
    case StmtKind::Return:
      line(indent, "Return " + loc(s.range));
      if (s.value)
        expr(indent + 1, *s.value);
      return;
    case StmtKind::Pass:
      line(indent, "Pass " + loc(s.range));
      return;
    }
  }

  void function(const Function &fn) {
    line(0, std::string(fn.kind == FunctionKind::Kernel ? "Kernel " : "Func ") + fn.name + " " +
                loc(fn.nameRange));
    if (fn.autotune) {
      std::string key;
      for (const std::string &k : fn.autotune->key)
        key += (key.empty() ? "" : ", ") + k;
      line(1, "Autotune key=[" + key + "]");
      for (const AutotuneConfig &cfg : fn.autotune->configs) {
        std::string text;
        for (const Keyword &kw : cfg.values)
          text += (text.empty() ? "" : ", ") + kw.name + "=" + exprToString(*kw.value);
        for (const ExprPtr &clause : cfg.clauses)
          text += " " + exprToString(*clause);
        line(2, "Config " + text);
      }
      if (fn.autotune->prune)
        line(2, "Prune " + exprToString(*fn.autotune->prune));
    }
    for (const Param &p : fn.params) {
      std::string text = "Param " + p.name;
      switch (p.kind) {
      case ParamKind::Pointer: text += ": *" + p.typeName; break;
      case ParamKind::Scalar: text += ": " + p.typeName; break;
      case ParamKind::Constexpr: text += ": constexpr"; break;
      case ParamKind::Untyped: break;
      }
      if (p.defaultValue)
        text += " = " + exprToString(*p.defaultValue);
      line(1, text);
    }
    line(1, "Body");
    block(2, fn.body);
  }
};

} // namespace

std::string exprToString(const Expr &e) {
  auto joinArgs = [](const std::vector<ExprPtr> &args, size_t from) {
    std::string s;
    for (size_t i = from; i < args.size(); ++i)
      s += (i > from ? ", " : "") + exprToString(*args[i]);
    return s;
  };
  switch (e.kind) {
  case ExprKind::Int: return std::to_string(e.intValue);
  case ExprKind::Float: return formatFloat(e.floatValue);
  case ExprKind::Bool: return e.intValue ? "True" : "False";
  case ExprKind::None: return "None";
  case ExprKind::String: return quote(e.name);
  case ExprKind::Name: return e.name;
  case ExprKind::Slice: return ":";
  case ExprKind::Unary:
    return std::string("(") + opSpelling(e.op) + (e.op == OpKind::Not ? " " : "") +
           exprToString(*e.args[0]) + ")";
  case ExprKind::Binary:
  case ExprKind::BoolOp:
    return "(" + exprToString(*e.args[0]) + " " + opSpelling(e.op) + " " +
           exprToString(*e.args[1]) + ")";
  case ExprKind::Ternary:
    return "(" + exprToString(*e.args[0]) + " if " + exprToString(*e.args[1]) + " else " +
           exprToString(*e.args[2]) + ")";
  case ExprKind::Attribute: return exprToString(*e.args[0]) + "." + e.name;
  case ExprKind::Subscript: return exprToString(*e.args[0]) + "[" + joinArgs(e.args, 1) + "]";
  case ExprKind::List: return "[" + joinArgs(e.args, 0) + "]";
  case ExprKind::Comprehension: {
    std::string s = "[" + exprToString(*e.args[0]);
    for (size_t i = 1; i < e.args.size(); ++i)
      s += " " + exprToString(*e.args[i]);
    return s + "]";
  }
  case ExprKind::CompFor:
    return "for " + (e.args[0]->kind == ExprKind::Tuple ? joinArgs(e.args[0]->args, 0)
                                                        : exprToString(*e.args[0])) +
           " in " + exprToString(*e.args[1]);
  case ExprKind::CompIf: return "if " + exprToString(*e.args[0]);
  case ExprKind::Tuple:
    return "(" + joinArgs(e.args, 0) + (e.args.size() == 1 ? ",)" : ")");
  case ExprKind::Call: {
    std::string s = exprToString(*e.args[0]) + "(" + joinArgs(e.args, 1);
    bool first = e.args.size() == 1;
    for (const Keyword &kw : e.keywords) {
      s += (first ? "" : ", ") + kw.name + "=" + exprToString(*kw.value);
      first = false;
    }
    return s + ")";
  }
  }
  return "?";
}

std::string printAST(const ast::Module &module, const FileNames &fileNames) {
  Printer p;
  p.fileNames = fileNames;
  for (const ast::Constant &c : module.constants)
    p.out += "Constant " + c.name + " = " + exprToString(*c.value) + "\n";
  for (const auto &fn : module.functions)
    p.function(*fn);
  return p.out;
}

} // namespace tessel::frontend
