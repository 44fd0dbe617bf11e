// What the statement emitters share (emitter.cpp, emit_branches.cpp, emit_loops.cpp,
// emit_statements.cpp): the exit flags of Note [Emitting control flow], the pre-scans of
// statement lists (names assigned, exits a statement may take), emission into a block.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "frontend/emitter.h"

namespace tsl::emit_scans {

// The flag variables of Note [Emitting control flow] (and the REPL's echoed value).
inline constexpr const char* kRet = "$ret";
inline constexpr const char* kReturned = "$returned";
inline constexpr const char* kBroke = "$broke";
inline constexpr const char* kContinued = "$continued";
inline constexpr const char* kEcho = "$echo";

inline bool is_flag(const std::string& name) { return !name.empty() && name[0] == '$'; }

// Names a statement (list) assigns, in order of first assignment (not inside defs).
void collect_assigned(const ast::Stmt& s, std::vector<std::string>& out);
void collect_assigned(const ast::Body& body, std::vector<std::string>& out);
// Names whose tensors a statement list updates through item assignment (`h[i] = v`,
// `h[i] += v`): a loop carries them, so that the update is a value autodiff can
// follow from one iteration to the next (see emit_setitem).
void collect_item_assigned(const ast::Body& body, std::vector<std::string>& out);
// `names` without repeats, in order.
std::vector<std::string> unique_names(const std::vector<std::string>& names);
// The exits a statement (list) may take; inside a nested loop, break and continue
// leave that loop, not the one asked about.
Exits exits_of(const ast::Stmt& s, bool in_nested_loop);
Exits exits_of(const ast::Body& body, bool in_nested_loop);
// Whether a statement list always leaves through return, break, continue or raise.
// With the answers kept per body: emit_if asks about each If of an elif chain, and
// each answer looks down the rest of the chain (quadratic otherwise).
bool always_exits(const ast::Body& body, std::unordered_map<const ast::Body*, bool>& memo);
// Whether a return occurs inside an if, while or for (so a flag must record it).
bool has_nested_return(const ast::Body& body, bool nested);
// "line 4" for messages ("here" without a location).
std::string line_of(const SourceRange& r);

// Runs `fn` with emission redirected into block `b` and scope `s`.
template <typename Fn>
auto with_block(Graph& g, Block*& current, Scope*& scope, Block* b, Scope* s, Fn&& fn) {
  Block* saved_block = current;
  Scope* saved_scope = scope;
  Node* saved_point = g.insert_point();
  current = b;
  scope = s;
  g.set_insert_point(b);
  struct Restore {
    Graph& g;
    Block*& current;
    Scope*& scope;
    Block* b;
    Scope* s;
    Node* p;
    ~Restore() {
      current = b;
      scope = s;
      g.set_insert_point(p);
    }
  } restore{g, current, scope, saved_block, saved_scope, saved_point};
  return fn();
}

}  // namespace tsl::emit_scans
