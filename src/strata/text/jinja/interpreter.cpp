// Statement execution: output, if/for/set, macros and call blocks, filter blocks, loop
// control. RuntimeErrors from builtins get the innermost statement's location here.
#include "strata/text/jinja/interpreter.h"

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/text/jinja/builtins.h"
#include "strata/text/jinja/value_arena.h"

namespace strata::jinja {

const Value* Scope::find(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent_.get()) {
    if (auto it = s->vars_.find(name); it != s->vars_.end()) return &it->second;
  }
  return nullptr;
}

void Scope::clear() {
  vars_.clear();
  parent_.reset();
}

ScopePtr make_scope(ScopePtr parent) {
  auto scope = std::make_shared<Scope>(std::move(parent));
  ValueArena::track(scope);
  return scope;
}

std::string located(int line, int column, const std::string& what) {
  return fmt::format("template line {}, column {}: {}", line, column, what);
}

std::string Interpreter::render(const Body& body, const ScopePtr& globals) {
  std::string out;
  exec_body(body, make_scope(globals), out);
  return out;
}

void Interpreter::append(std::string& out, const std::string& text) const {
  if (out.size() + text.size() > limits_.max_output_bytes) {
    throw RuntimeError(fmt::format("template output exceeds {} bytes", limits_.max_output_bytes));
  }
  out += text;
}

Interpreter::Flow Interpreter::exec_body(const Body& body, const ScopePtr& scope, std::string& out) {
  for (const StmtPtr& stmt : body) {
    const Flow flow = exec(*stmt, scope, out);
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::exec(const Stmt& stmt, const ScopePtr& scope, std::string& out) {
  try {
    return exec_kind(stmt, scope, out);
  } catch (const RuntimeError& e) {
    throw Error(located(stmt.line, stmt.column, e.what()));
  }
}

Interpreter::Flow Interpreter::exec_kind(const Stmt& stmt, const ScopePtr& scope, std::string& out) {
  switch (stmt.kind) {
    case StmtKind::kText: append(out, static_cast<const TextStmt&>(stmt).text); break;
    case StmtKind::kOutput:
      append(out, eval(*static_cast<const OutputStmt&>(stmt).expr, scope).str());
      break;
    case StmtKind::kIf: return exec_if(static_cast<const IfStmt&>(stmt), scope, out);
    case StmtKind::kFor: exec_for(static_cast<const ForStmt&>(stmt), scope, out); break;
    case StmtKind::kSet: {
      const auto& set = static_cast<const SetStmt&>(stmt);
      assign(set.target, eval(*set.value, scope), *scope);
      break;
    }
    case StmtKind::kSetBlock: {
      const auto& set = static_cast<const SetBlockStmt&>(stmt);
      std::string captured;
      exec_body(set.body, scope, captured);
      assign(set.target, Value(std::move(captured)), *scope);
      break;
    }
    case StmtKind::kMacro: {
      const auto& macro = static_cast<const MacroStmt&>(stmt);
      scope->set(macro.name, make_macro(macro, scope));
      break;
    }
    case StmtKind::kCallBlock:
      exec_call_block(static_cast<const CallBlockStmt&>(stmt), scope, out);
      break;
    case StmtKind::kFilterBlock:
      exec_filter_block(static_cast<const FilterBlockStmt&>(stmt), scope, out);
      break;
    case StmtKind::kScope: return exec_body(static_cast<const ScopeStmt&>(stmt).body, scope, out);
    case StmtKind::kBreak: return Flow::kBreak;
    case StmtKind::kContinue: return Flow::kContinue;
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::exec_if(const IfStmt& stmt, const ScopePtr& scope, std::string& out) {
  for (const auto& [cond, body] : stmt.branches) {
    if (eval(*cond, scope).truthy()) return exec_body(body, scope, out);
  }
  return exec_body(stmt.else_body, scope, out);
}

namespace {

Value make_loop(const std::vector<Value>& items, size_t i) {
  const int64_t n = std::ssize(items);
  const int64_t k = static_cast<int64_t>(i);
  Value loop = Value::dict();
  Dict& d = loop.as_dict();
  d.set("index0", Value(k));
  d.set("index", Value(k + 1));
  d.set("revindex", Value(n - k));
  d.set("revindex0", Value(n - k - 1));
  d.set("first", Value(k == 0));
  d.set("last", Value(k == n - 1));
  d.set("length", Value(n));
  d.set("depth", Value(1));
  d.set("depth0", Value(0));
  d.set("previtem", k > 0 ? items[i - 1] : Value::undefined("there is no previous item"));
  d.set("nextitem", k + 1 < n ? items[i + 1] : Value::undefined("there is no next item"));
  d.set("cycle", Value::function("loop.cycle", [k](const CallArgs& args) {
          if (args.positional.empty()) throw RuntimeError("loop.cycle needs at least one item");
          return args.positional[k % std::ssize(args.positional)];
        }));
  return loop;
}

}  // namespace

void Interpreter::exec_for(const ForStmt& stmt, const ScopePtr& scope, std::string& out) {
  const Value iterable = eval(*stmt.iter, scope);
  if (!iterable.is_undefined() && !iterable.is_string() && !iterable.is_list() &&
      !(iterable.is_dict() && !iterable.as_dict().is_namespace)) {
    throw RuntimeError(fmt::format("'{}' object is not iterable", iterable.type_name()));
  }
  std::vector<Value> items;
  for (Value& item : iterable.iterate()) {
    if (stmt.filter) {
      auto probe = make_scope(scope);
      assign(stmt.target, item, *probe);
      if (!eval(*stmt.filter, probe).truthy()) continue;
    }
    items.push_back(std::move(item));
  }
  for (size_t i = 0; i < items.size(); ++i) {
    if (++num_iterations_ > limits_.max_loop_iterations) {
      throw RuntimeError(fmt::format("template loops ran more than {} iterations",
                                     limits_.max_loop_iterations));
    }
    auto iteration = make_scope(scope);
    iteration->set("loop", make_loop(items, i));
    assign(stmt.target, items[i], *iteration);
    if (exec_body(stmt.body, iteration, out) == Flow::kBreak) break;
  }
  if (items.empty()) exec_body(stmt.else_body, scope, out);
}

void Interpreter::assign(const Target& target, const Value& value, Scope& scope) {
  if (target.is_tuple) {
    const std::vector<Value> parts = value.iterate();
    if (parts.size() != target.items.size()) {
      throw RuntimeError(fmt::format("cannot unpack {} values into {} names", parts.size(),
                                     target.items.size()));
    }
    for (size_t i = 0; i < parts.size(); ++i) assign(target.items[i], parts[i], scope);
    return;
  }
  if (target.attr.empty()) {
    scope.set(target.name, value);
    return;
  }
  const Value* object = scope.find(target.name);
  if (!object || !object->is_dict() || !object->as_dict().is_namespace) {
    throw RuntimeError(fmt::format("cannot assign attribute on non-namespace object '{}'",
                                   target.name));
  }
  object->as_dict().set(target.attr, value);
}

Value Interpreter::make_macro(const MacroStmt& macro, const ScopePtr& closure) {
  return Value::function(macro.name, [this, &macro, closure](const CallArgs& args) {
    return call_macro(macro, closure, args);
  });
}

Value Interpreter::call_macro(const MacroStmt& macro, const ScopePtr& closure, const CallArgs& args) {
  if (macro_depth_ >= limits_.max_macro_depth) {
    throw RuntimeError(fmt::format("macro '{}' recursed deeper than {} calls", macro.name,
                                   limits_.max_macro_depth));
  }
  if (args.positional.size() > macro.params.size()) {
    throw RuntimeError(fmt::format("macro '{}' takes not more than {} argument(s)", macro.name,
                                   macro.params.size()));
  }
  auto local = make_scope(closure);
  for (const auto& [name, value] : args.keyword) {
    const bool known = std::find(macro.params.begin(), macro.params.end(), name) != macro.params.end();
    if (!known && name != "caller") {
      throw RuntimeError(fmt::format("macro '{}' takes no keyword argument '{}'", macro.name, name));
    }
  }
  local->set("caller", args.kwarg("caller") ? *args.kwarg("caller") : Value::undefined("'caller' is undefined"));
  for (size_t i = 0; i < macro.params.size(); ++i) {
    const std::string& name = macro.params[i];
    if (const Value* v = args.get(i, name)) local->set(name, *v);
    else if (macro.defaults[i]) local->set(name, eval(*macro.defaults[i], local));
    else local->set(name, Value::undefined(fmt::format("parameter '{}' was not provided", name)));
  }
  std::string out;
  ++macro_depth_;
  try {
    exec_body(macro.body, local, out);
  } catch (...) {
    --macro_depth_;
    throw;
  }
  --macro_depth_;
  return Value(std::move(out));
}

void Interpreter::exec_call_block(const CallBlockStmt& stmt, const ScopePtr& scope, std::string& out) {
  const auto& call = static_cast<const CallExpr&>(*stmt.call);
  const Value callee = eval(*call.callee, scope);
  if (!callee.is_callable()) {
    callee.require_defined();
    throw RuntimeError(fmt::format("'{}' object is not callable", callee.type_name()));
  }
  CallArgs args = eval_args(call.args, scope);
  args.keyword.emplace_back("caller", make_macro(stmt.caller, scope));
  append(out, callee.as_callable().fn(args).str());
}

void Interpreter::exec_filter_block(const FilterBlockStmt& stmt, const ScopePtr& scope, std::string& out) {
  std::string captured;
  exec_body(stmt.body, scope, captured);
  Value value(std::move(captured));
  for (const ExprPtr& filter : stmt.filters) {
    value = eval_filter(static_cast<const FilterExpr&>(*filter), value, scope);
  }
  append(out, value.str());
}

}  // namespace strata::jinja
