// The parsed form of a Jinja template: expression and statement nodes, owned by unique_ptr.
// Every node keeps the line and column where it starts, for runtime error messages.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "strata/text/jinja/value.h"

namespace strata::jinja {

enum class ExprKind {
  kLiteral, kName, kList, kDict, kUnary, kBinary, kCompare, kCond, kGetAttr, kGetItem,
  kSlice, kCall, kFilter, kTest
};

struct Expr {
  Expr(ExprKind k, int l, int c) : kind(k), line(l), column(c) {}
  virtual ~Expr() = default;
  ExprKind kind;
  int line;
  int column;
};
using ExprPtr = std::unique_ptr<Expr>;

struct Arguments {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
};

struct LiteralExpr : Expr { using Expr::Expr; Value value; };
struct NameExpr : Expr { using Expr::Expr; std::string name; };
struct ListExpr : Expr { using Expr::Expr; std::vector<ExprPtr> items; bool is_tuple = false; };
struct DictExpr : Expr { using Expr::Expr; std::vector<std::pair<ExprPtr, ExprPtr>> items; };
// op: "-", "+" or "not".
struct UnaryExpr : Expr { using Expr::Expr; std::string op; ExprPtr operand; };
// op: + - * / // % ** ~ and or.
struct BinaryExpr : Expr { using Expr::Expr; std::string op; ExprPtr left, right; };
// Python-style chain a < b < c; ops: == != < > <= >= in "not in".
struct CompareExpr : Expr {
  using Expr::Expr;
  ExprPtr first;
  std::vector<std::pair<std::string, ExprPtr>> rest;
};
struct CondExpr : Expr { using Expr::Expr; ExprPtr cond, then_expr, else_expr; };  // else may be null
struct GetAttrExpr : Expr { using Expr::Expr; ExprPtr object; std::string name; };
struct GetItemExpr : Expr { using Expr::Expr; ExprPtr object, index; };
struct SliceExpr : Expr { using Expr::Expr; ExprPtr object, start, stop, step; };  // parts may be null
struct CallExpr : Expr { using Expr::Expr; ExprPtr callee; Arguments args; };
struct FilterExpr : Expr { using Expr::Expr; ExprPtr operand; std::string name; Arguments args; };
struct TestExpr : Expr {
  using Expr::Expr;
  ExprPtr operand;
  std::string name;
  Arguments args;
  bool negated = false;
};

// What `set` and `for` assign to: a name, `ns.attr`, or a (nested) tuple of targets.
struct Target {
  std::string name;
  std::string attr;  // non-empty for `set ns.attr = ...`
  std::vector<Target> items;
  bool is_tuple = false;
};

enum class StmtKind {
  kText, kOutput, kIf, kFor, kSet, kSetBlock, kMacro, kCallBlock, kFilterBlock, kBreak,
  kContinue, kScope
};

struct Stmt {
  Stmt(StmtKind k, int l, int c) : kind(k), line(l), column(c) {}
  virtual ~Stmt() = default;
  StmtKind kind;
  int line;
  int column;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct TextStmt : Stmt { using Stmt::Stmt; std::string text; };
struct OutputStmt : Stmt { using Stmt::Stmt; ExprPtr expr; };
struct IfStmt : Stmt {
  using Stmt::Stmt;
  std::vector<std::pair<ExprPtr, Body>> branches;  // if, elif...
  Body else_body;
};
struct ForStmt : Stmt {
  using Stmt::Stmt;
  Target target;
  ExprPtr iter, filter;  // filter: the `if` after the iterable, may be null
  Body body, else_body;
};
struct SetStmt : Stmt { using Stmt::Stmt; Target target; ExprPtr value; };
struct SetBlockStmt : Stmt { using Stmt::Stmt; Target target; Body body; };
struct MacroStmt : Stmt {
  using Stmt::Stmt;
  std::string name;
  std::vector<std::string> params;
  std::vector<ExprPtr> defaults;  // one per param, null where it has none
  Body body;
};
// `{% call(params) macro(args) %}body{% endcall %}`: body becomes `caller` inside the macro.
struct CallBlockStmt : Stmt {
  ExprPtr call;
  MacroStmt caller;
  CallBlockStmt(StmtKind k, int l, int c) : Stmt(k, l, c), caller(StmtKind::kMacro, l, c) {}
};
// filters: a chain of FilterExpr with a null operand, applied in order to the body's output.
struct FilterBlockStmt : Stmt { using Stmt::Stmt; std::vector<ExprPtr> filters; Body body; };
// A body with no semantics of its own, e.g. `{% generation %}` in transformers templates.
struct ScopeStmt : Stmt { using Stmt::Stmt; Body body; };

}  // namespace strata::jinja
