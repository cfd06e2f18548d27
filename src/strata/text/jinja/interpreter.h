// Executes a parsed template against a scope of variables. Scoping follows jinja2: each for
// iteration and each macro call gets its own scope, `if` does not; namespace() objects are
// the way to carry state out of a loop. Bounded: output bytes, loop iterations, macro depth.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "strata/text/jinja/ast.h"
#include "strata/text/jinja/value.h"

namespace strata::jinja {

struct RenderLimits {
  size_t max_output_bytes = size_t{64} << 20;
  int64_t max_loop_iterations = 10'000'000;  // all loops of one render together
  int max_macro_depth = 100;
};

class Scope {
 public:
  explicit Scope(std::shared_ptr<Scope> parent = nullptr) : parent_(std::move(parent)) {}
  const Value* find(const std::string& name) const;
  void set(const std::string& name, Value value) { vars_[name] = std::move(value); }
  void clear();  // drops the variables and the parent (ValueArena breaking cycles)

 private:
  std::shared_ptr<Scope> parent_;
  std::unordered_map<std::string, Value> vars_;
};
using ScopePtr = std::shared_ptr<Scope>;
// Every scope is made here so the render's ValueArena can free scope <-> macro cycles.
ScopePtr make_scope(ScopePtr parent = nullptr);

class Interpreter {
 public:
  explicit Interpreter(const RenderLimits& limits) : limits_(limits) {}
  // Runtime errors come out as strata::Error naming the template line and column.
  std::string render(const Body& body, const ScopePtr& globals);

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  // Statements (interpreter.cpp).
  Flow exec_body(const Body& body, const ScopePtr& scope, std::string& out);
  Flow exec(const Stmt& stmt, const ScopePtr& scope, std::string& out);
  Flow exec_kind(const Stmt& stmt, const ScopePtr& scope, std::string& out);
  Flow exec_if(const IfStmt& stmt, const ScopePtr& scope, std::string& out);
  void exec_for(const ForStmt& stmt, const ScopePtr& scope, std::string& out);
  void exec_call_block(const CallBlockStmt& stmt, const ScopePtr& scope, std::string& out);
  void exec_filter_block(const FilterBlockStmt& stmt, const ScopePtr& scope, std::string& out);
  void assign(const Target& target, const Value& value, Scope& scope);
  Value make_macro(const MacroStmt& macro, const ScopePtr& closure);
  Value call_macro(const MacroStmt& macro, const ScopePtr& closure, const CallArgs& args);
  void append(std::string& out, const std::string& text) const;

  // Expressions (evaluator.cpp).
  Value eval(const Expr& expr, const ScopePtr& scope);
  Value eval_kind(const Expr& expr, const ScopePtr& scope);
  Value eval_binary(const BinaryExpr& expr, const ScopePtr& scope);
  Value eval_compare(const CompareExpr& expr, const ScopePtr& scope);
  Value eval_call(const CallExpr& expr, const ScopePtr& scope);
  Value eval_filter(const FilterExpr& expr, const Value& operand, const ScopePtr& scope);
  Value eval_collection(const Expr& expr, const ScopePtr& scope);
  CallArgs eval_args(const Arguments& args, const ScopePtr& scope);

  RenderLimits limits_;
  int macro_depth_ = 0;
  int64_t num_iterations_ = 0;
};

// `template line L, column C: what` for errors raised at a node.
std::string located(int line, int column, const std::string& what);

}  // namespace strata::jinja
