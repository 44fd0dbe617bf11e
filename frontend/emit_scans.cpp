// The pre-scans of statement lists the emitter makes before emitting them: the names a
// list assigns, and the exits (return, break, continue) its statements may take.
#include "frontend/emit_scans.h"

#include <unordered_set>

namespace tsl::emit_scans {
namespace {

// The names a target binds (`x`, `a, b`, `[a, (b, c)]`), appended to `out`.
void collect_target_names(const ast::Expr& t, std::vector<std::string>& out) {
  switch (t.kind) {
    case ast::ExprKind::Name:
      out.push_back(ast::as<ast::Name>(t).id);
      break;
    case ast::ExprKind::Tuple:
      for (const auto& e : ast::as<ast::TupleExpr>(t).elts) collect_target_names(*e, out);
      break;
    case ast::ExprKind::List:
      for (const auto& e : ast::as<ast::ListExpr>(t).elts) collect_target_names(*e, out);
      break;
    default:
      break;
  }
}

}  // namespace

void collect_assigned(const ast::Stmt& s, std::vector<std::string>& out) {
  switch (s.kind) {
    case ast::StmtKind::Assign:
      for (const auto& t : ast::as<ast::Assign>(s).targets) collect_target_names(*t, out);
      break;
    case ast::StmtKind::AugAssign:
      collect_target_names(*ast::as<ast::AugAssign>(s).target, out);
      break;
    case ast::StmtKind::AnnAssign:
      collect_target_names(*ast::as<ast::AnnAssign>(s).target, out);
      break;
    case ast::StmtKind::If:
      collect_assigned(ast::as<ast::If>(s).body, out);
      collect_assigned(ast::as<ast::If>(s).orelse, out);
      break;
    case ast::StmtKind::While:
      collect_assigned(ast::as<ast::While>(s).body, out);
      break;
    case ast::StmtKind::For:
      collect_target_names(*ast::as<ast::For>(s).target, out);
      collect_assigned(ast::as<ast::For>(s).body, out);
      break;
    case ast::StmtKind::With:
      for (const auto& item : ast::as<ast::With>(s).items) {
        if (item.target) collect_target_names(*item.target, out);
      }
      collect_assigned(ast::as<ast::With>(s).body, out);
      break;
    default:
      break;
  }
}

void collect_assigned(const ast::Body& body, std::vector<std::string>& out) {
  for (const auto& s : body) collect_assigned(*s, out);
}

void collect_item_assigned(const ast::Body& body, std::vector<std::string>& out) {
  auto base_of = [&](const ast::Expr& t) {
    if (t.kind != ast::ExprKind::Subscript) return;
    const ast::Expr& v = *ast::as<ast::Subscript>(t).value;
    if (v.kind == ast::ExprKind::Name) out.push_back(ast::as<ast::Name>(v).id);
  };
  for (const auto& sp : body) {
    const ast::Stmt& s = *sp;
    switch (s.kind) {
      case ast::StmtKind::Assign:
        for (const auto& t : ast::as<ast::Assign>(s).targets) base_of(*t);
        break;
      case ast::StmtKind::AugAssign:
        base_of(*ast::as<ast::AugAssign>(s).target);
        break;
      case ast::StmtKind::If:
        collect_item_assigned(ast::as<ast::If>(s).body, out);
        collect_item_assigned(ast::as<ast::If>(s).orelse, out);
        break;
      case ast::StmtKind::While:
        collect_item_assigned(ast::as<ast::While>(s).body, out);
        break;
      case ast::StmtKind::For:
        collect_item_assigned(ast::as<ast::For>(s).body, out);
        break;
      case ast::StmtKind::With:
        collect_item_assigned(ast::as<ast::With>(s).body, out);
        break;
      default:
        break;
    }
  }
}

std::vector<std::string> unique_names(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  for (const auto& n : names) {
    if (seen.insert(n).second) out.push_back(n);
  }
  return out;
}

Exits exits_of(const ast::Stmt& s, bool in_nested_loop) {
  Exits e;
  switch (s.kind) {
    case ast::StmtKind::Return:
      e.ret = true;
      break;
    case ast::StmtKind::Break:
      e.brk = !in_nested_loop;
      break;
    case ast::StmtKind::Continue:
      e.cont = !in_nested_loop;
      break;
    case ast::StmtKind::If: {
      Exits a = exits_of(ast::as<ast::If>(s).body, in_nested_loop);
      Exits b = exits_of(ast::as<ast::If>(s).orelse, in_nested_loop);
      e = {a.ret || b.ret, a.brk || b.brk, a.cont || b.cont};
      break;
    }
    case ast::StmtKind::While:
      e.ret = exits_of(ast::as<ast::While>(s).body, true).ret;
      break;
    case ast::StmtKind::For:
      e.ret = exits_of(ast::as<ast::For>(s).body, true).ret;
      break;
    case ast::StmtKind::With:
      e = exits_of(ast::as<ast::With>(s).body, in_nested_loop);
      break;
    default:
      break;
  }
  return e;
}

Exits exits_of(const ast::Body& body, bool in_nested_loop) {
  Exits e;
  for (const auto& s : body) {
    Exits x = exits_of(*s, in_nested_loop);
    e.ret |= x.ret;
    e.brk |= x.brk;
    e.cont |= x.cont;
  }
  return e;
}

bool always_exits(const ast::Body& body, std::unordered_map<const ast::Body*, bool>& memo) {
  if (auto it = memo.find(&body); it != memo.end()) return it->second;
  bool exits = false;
  for (const auto& sp : body) {
    switch (sp->kind) {
      case ast::StmtKind::Return:
      case ast::StmtKind::Break:
      case ast::StmtKind::Continue:
      case ast::StmtKind::Raise:
        exits = true;
        break;
      case ast::StmtKind::If:
        exits = always_exits(ast::as<ast::If>(*sp).body, memo) &&
                always_exits(ast::as<ast::If>(*sp).orelse, memo);
        break;
      case ast::StmtKind::With:
        exits = always_exits(ast::as<ast::With>(*sp).body, memo);
        break;
      default:
        break;
    }
    if (exits) break;
  }
  memo[&body] = exits;
  return exits;
}

bool has_nested_return(const ast::Body& body, bool nested) {
  for (const auto& sp : body) {
    const ast::Stmt& s = *sp;
    switch (s.kind) {
      case ast::StmtKind::Return:
        if (nested) return true;
        break;
      case ast::StmtKind::If:
        if (has_nested_return(ast::as<ast::If>(s).body, true) ||
            has_nested_return(ast::as<ast::If>(s).orelse, true)) {
          return true;
        }
        break;
      case ast::StmtKind::While:
        if (has_nested_return(ast::as<ast::While>(s).body, true)) return true;
        break;
      case ast::StmtKind::For:
        if (has_nested_return(ast::as<ast::For>(s).body, true)) return true;
        break;
      case ast::StmtKind::With:
        if (has_nested_return(ast::as<ast::With>(s).body, nested)) return true;
        break;
      default:
        break;
    }
  }
  return false;
}

std::string line_of(const SourceRange& r) {
  return r.valid() ? "line " + std::to_string(r.line) : "here";
}

}  // namespace tsl::emit_scans
