// Loops in the emitter: `while`, `for` over ranges, lists, tensors, dicts, enumerate,
// zip and progress(), with their loop-carried variables and exit flags. See Note
// [Emitting control flow].
#include "frontend/emit_scans.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace tsl {

using namespace emit_scans;

// ---- Loops -----------------------------------------------------------------------------------

void Emitter::emit_loop(Value* trip_count, Value* first_cond, const ast::Body& body,
                        const SourceRange& range, const std::function<void(Value*)>& prologue,
                        const ast::Expr* while_cond,
                        const std::function<void()>& after_normal_exit) {
  Exits may = exits_of(body, false);
  if (may.ret && mode_ == Mode::TopLevel) {
    compile_error(range, "'return' outside function");
  }
  std::vector<std::string> assigned;
  collect_assigned(body, assigned);
  std::vector<std::string> item_assigned;
  collect_item_assigned(body, item_assigned);
  for (const std::string& name : item_assigned) {
    // A dict written by `d[k] = v` stays the same object: nothing to carry (and
    // autodiff follows its entries only while it is not carried).
    Binding* b = lookup_local(name);
    if (b && b->value->type()->kind() != TypeKind::Dict) assigned.push_back(name);
  }
  if (may.brk) write_variable(kBroke, constant(IValue(false), Type::bool_(), range), range);
  std::vector<std::string> carried;
  std::vector<Value*> initial;
  for (const std::string& name : unique_names(assigned)) {
    Binding* b = lookup_local(name);
    if (b) {
      carried.push_back(name);
      initial.push_back(b->value);
    } else if (mode_ == Mode::TopLevel && !(unit_.find_global(qualified(name)))) {
      // New at the top level: visible after the loop as in Python, through a
      // placeholder whose type the body decides.
      carried.push_back(name);
      Node* u = graph_.insert(graph_.create(OpId::Uninitialized, {}, 1));
      u->output()->set_type(pending_return_type_);
      initial.push_back(u->output());
    } else if (mode_ == Mode::TopLevel) {
      carried.push_back(name);
      initial.push_back(read_variable(name, range));
    }
  }
  if (may.brk) {
    carried.push_back(kBroke);
    initial.push_back(lookup_local(kBroke)->value);
  }
  if (may.ret) {
    carried.push_back(kReturned);
    initial.push_back(lookup_local(kReturned)->value);
    Binding* ret = lookup_local(kRet);
    Value* init = ret ? ret->value : nullptr;
    if (!init) {
      Node* u = graph_.insert(graph_.create(OpId::Uninitialized, {}, 1));
      u->output()->set_type(return_type_ ? return_type_ : pending_return_type_);
      init = u->output();
    }
    carried.push_back(kRet);
    initial.push_back(init);
  }

  // Note [Loop-carried refinements]
  // A carried variable starts with its initial value's type; where the body assigns it
  // a value whose refinement differs (`x = torch.tensor(0)`, then `x = x + a` with a of
  // another or unknown dtype), the type must hold what both guarantee, or `x.item()`
  // after the loop reads an int64 that is a float. The body is emitted with the
  // initial types, and again with the joined ones when they differ (twice at most:
  // a join only drops refinements). The state the body's emission changes is restored
  // before the second time.
  std::vector<TypePtr> param_types;
  for (Value* v : initial) param_types.push_back(v->type());
  struct Saved {
    std::unordered_map<std::string, Binding> declared;
    std::unordered_map<std::string, TypePtr> annotated;
    std::unordered_map<std::string, std::string> maybe_undefined;
    std::unordered_set<const Value*> no_grad_reads;
    TypePtr return_type;
    SourceRange return_range;
    bool needs_return_flag;
  };
  const Saved saved{declared_,    annotated_,    maybe_undefined_,  no_grad_reads_,
                    return_type_, return_range_, needs_return_flag_};
  std::vector<Value*> inputs = {trip_count, first_cond};
  inputs.insert(inputs.end(), initial.begin(), initial.end());
  for (int attempt = 0;; ++attempt) {
    bool widened = false;
    Node* loop = graph_.insert(graph_.create(OpId::Loop, inputs, 0));
    loop->set_range(range);
    Block* b = loop->add_block();
    Value* index = b->add_param(Type::int_(), "");
    Scope body_scope(scope_);
    std::vector<Value*> params;
    for (size_t k = 0; k < carried.size(); ++k) {
      Value* p = b->add_param(param_types[k], is_flag(carried[k]) ? "" : carried[k]);
      params.push_back(p);
      body_scope.set(carried[k], {p, range});
    }
    loops_.push_back({may.brk, may.cont});
    ++loop_depth_;
    with_block(graph_, block_, scope_, b, &body_scope, [&] {
      prologue(index);
      if (may.cont)
        write_variable(kContinued, constant(IValue(false), Type::bool_(), range), range);
      emit_stmts(body);
      // The condition for the next iteration: no break, no return, and the while
      // condition again (evaluated only when still running).
      std::function<Value*(size_t)> next = [&](size_t stage) -> Value* {
        const char* flag = stage == 0   ? (may.ret ? kReturned : nullptr)
                           : stage == 1 ? (may.brk ? kBroke : nullptr)
                                        : nullptr;
        if (stage < 2) {
          if (!flag) return next(stage + 1);
          Value* f = read_variable(flag, range);
          Node* n = graph_.insert(graph_.create(OpId::If, {f}, 1));
          n->set_range(range);
          Block* t = n->add_block();
          Block* e = n->add_block();
          {
            InsertPointGuard g(graph_, t);
            t->add_return(constant(IValue(false), Type::bool_(), range));
          }
          {
            Block* saved = block_;
            block_ = e;
            InsertPointGuard g(graph_, e);
            e->add_return(next(stage + 1));
            block_ = saved;
          }
          return n->output()->set_type(Type::bool_());
        }
        if (!while_cond) return constant(IValue(true), Type::bool_(), range);
        return to_bool(emit_expr(*while_cond), while_cond->range, "a 'while' condition");
      };
      b->add_return(next(0));
      for (size_t k = 0; k < carried.size(); ++k) {
        Binding* cur = scope_->find(carried[k]);
        Value* v = cur->value;
        Value* p = params[k];
        if (p->type() == pending_return_type_ && v->type() != pending_return_type_) {
          // The placeholder learns its type from the body.
          p->set_type(v->type());
          initial[k]->set_type(v->type());
        } else if (v->type()->equals(*p->type())) {
          TypePtr joined = unify_types(p->type(), v->type());
          if (!same_refinements(joined, p->type()) && attempt == 0) {
            param_types[k] = joined;
            widened = true;
          }
        } else {
          TypePtr unified = unify_types(p->type(), v->type());
          if (unified && unified->equals(*p->type())) {
            v = convert_to(v, p->type(), cur->range, "variable '" + carried[k] + "'");
          } else {
            SourceError err(SourceError::Kind::Compile, cur->range,
                            "variable '" + carried[k] + "' has type " + p->type()->str() +
                                " before the loop but is assigned " + v->type()->str() + " in it");
            throw err;
          }
        }
        b->add_return(v);
      }
      return 0;
    });
    --loop_depth_;
    loops_.pop_back();
    if (widened) {
      loop->destroy();
      declared_ = saved.declared;
      annotated_ = saved.annotated;
      maybe_undefined_ = saved.maybe_undefined;
      no_grad_reads_ = saved.no_grad_reads;
      return_type_ = saved.return_type;
      return_range_ = saved.return_range;
      needs_return_flag_ = saved.needs_return_flag;
      continue;
    }
    for (size_t k = 0; k < carried.size(); ++k) {
      Value* out = loop->add_output()->set_type(params[k]->type());
      if (!is_flag(carried[k])) out->set_debug_name(carried[k]);
      if (initial[k]->type() == pending_return_type_ && !is_flag(carried[k])) {
        // Never assigned in the body after all (only read): nothing to carry.
        maybe_undefined_[carried[k]] = "it is only assigned inside the loop";
      }
      scope_->set(carried[k], {out, range});
    }
    // Variables first assigned in the body are not defined after a function's loop.
    for (const std::string& name : unique_names(assigned)) {
      if (!scope_->find(name)) {
        maybe_undefined_[name] = "it is assigned only inside the loop at " + line_of(range);
      }
    }
    break;
  }
  if (after_normal_exit) emit_after_normal_exit(may, range, after_normal_exit);
  if (may.brk) scope_->set(kBroke, {constant(IValue(false), Type::bool_(), range), range});
}

// Runs `fn` after a loop unless a `break` or `return` left it (the flags the loop just
// carried out tell).
void Emitter::emit_after_normal_exit(const Exits& may, const SourceRange& range,
                                     const std::function<void()>& fn) {
  std::vector<const char*> flags;
  if (may.brk) flags.push_back(kBroke);
  if (may.ret) flags.push_back(kReturned);
  std::function<void(size_t)> unless = [&](size_t k) {
    if (k == flags.size()) return fn();
    emit_branches(
        read_variable(flags[k], range), range, [] { return false; },
        [&] {
          unless(k + 1);
          return false;
        });
  };
  unless(0);
}

void Emitter::emit_while(const ast::While& s) {
  Value* cond = to_bool(emit_expr(*s.cond), s.cond->range, "a 'while' condition");
  Value* trip = constant(IValue(std::numeric_limits<int64_t>::max()), Type::int_(), s.range);
  emit_loop(
      trip, cond, s.body, s.range, [](Value*) {}, s.cond.get());
}

// `for x in progress(xs, desc="...")`: the loop over xs, reporting its progress
// (Note [Progress lines] in runtime/kernels/scalar_ops.cpp). Null unless `iter` is
// such a call; `desc` gets its description.
const ast::Expr* Emitter::progress_iterable(const ast::Expr& iter, Value*& desc) {
  if (iter.kind != ast::ExprKind::Call) return nullptr;
  const auto& c = ast::as<ast::Call>(iter);
  if (c.func->kind != ast::ExprKind::Name || ast::as<ast::Name>(*c.func).id != "progress" ||
      lookup_local("progress") || unit_.find_global(qualified("progress")) ||
      unit_.find_function(qualified("progress")))
    return nullptr;
  const ast::Expr* desc_expr = c.args.size() == 2 ? c.args[1].get() : nullptr;
  for (const auto& k : c.keywords) {
    if (k.name != "desc" || desc_expr)
      compile_error(k.range, "progress() takes an iterable and desc=, not '" + k.name + "'");
    desc_expr = k.value.get();
  }
  if (c.args.empty() || c.args.size() > 2)
    compile_error(c.range, "progress() takes an iterable (and desc=)");
  desc = desc_expr ? emit_expr(*desc_expr) : constant(IValue(std::string()), Type::str_(), c.range);
  if (desc->type()->kind() != TypeKind::Str)
    compile_error(desc_expr->range, "progress(): desc must be str, not " + desc->type()->str());
  return c.args[0].get();
}

Emitter::RangeLoop Emitter::emit_range_loop(const ast::Call& c) {
  if (!c.keywords.empty() || c.args.empty() || c.args.size() > 3) {
    compile_error(c.range, "range() takes 1 to 3 positional arguments");
  }
  std::vector<Value*> a;
  for (const auto& e : c.args) {
    Value* v = emit_expr(*e);
    if (v->type()->kind() != TypeKind::Int) {
      compile_error(e->range, "range() arguments must be int, not " + v->type()->str());
    }
    a.push_back(v);
  }
  RangeLoop r;
  r.start = a.size() >= 2 ? a[0] : constant(IValue(int64_t{0}), Type::int_(), c.range);
  Value* end = a.size() >= 2 ? a[1] : a[0];
  r.step = a.size() == 3 ? a[2] : constant(IValue(int64_t{1}), Type::int_(), c.range);
  r.trip = graph_.insert_op(OpId::range_length, {r.start, end, r.step}, Type::int_(), c.range);
  r.simple = a.size() == 1;
  return r;
}

Value* Emitter::range_item(const RangeLoop& r, Value* index, const SourceRange& range) {
  if (r.simple) return index;
  Value* scaled = graph_.insert_op(OpId::mul_int, {index, r.step}, Type::int_(), range);
  return graph_.insert_op(OpId::add_int, {r.start, scaled}, Type::int_(), range);
}

void Emitter::emit_for(const ast::For& s) {
  Value* progress_desc = nullptr;
  const ast::Expr* inner = progress_iterable(*s.iter, progress_desc);
  const ast::Expr& iter = inner ? *inner : *s.iter;
  Value* trip = nullptr;
  std::function<void(Value*)> prologue;
  std::function<void()> after_normal_exit;  // Python's last next() of a dict iterator
  const ast::Expr& target = *s.target;
  auto is_call_to = [&](const char* name) {
    if (iter.kind != ast::ExprKind::Call) return false;
    const auto& c = ast::as<ast::Call>(iter);
    return c.func->kind == ast::ExprKind::Name && ast::as<ast::Name>(*c.func).id == name &&
           !lookup_local(name) && !unit_.find_global(qualified(name)) &&
           !unit_.find_function(qualified(name));
  };
  if (is_call_to("range")) {
    RangeLoop r = emit_range_loop(ast::as<ast::Call>(iter));
    trip = r.trip;
    prologue = [=, this, &target, &s](Value* index) {
      assign_target(target, range_item(r, index, s.iter->range), s.target->range);
    };
  } else if (is_call_to("enumerate") || is_call_to("zip")) {
    const auto& c = ast::as<ast::Call>(iter);
    bool enumerate = is_call_to("enumerate");
    std::vector<Value*> seqs;
    for (const auto& e : c.args) seqs.push_back(emit_expr(*e));
    if (seqs.empty() || (enumerate && seqs.size() != 1)) {
      compile_error(c.range,
                    enumerate ? "enumerate() takes one list or tensor" : "zip() needs lists");
    }
    auto length = [&](Value* v, const SourceRange& r) -> Value* {
      if (v->type()->kind() == TypeKind::List)
        return graph_.insert_op(OpId::len_list, {v}, Type::int_(), r);
      if (v->type()->is_tensor()) return graph_.insert_op(OpId::len_tensor, {v}, Type::int_(), r);
      compile_error(r, "cannot iterate over a value of type " + v->type()->str());
    };
    trip = length(seqs[0], c.args[0]->range);
    for (size_t k = 1; k < seqs.size(); ++k) {
      trip = graph_.insert_op(OpId::min_int, {trip, length(seqs[k], c.args[k]->range)},
                              Type::int_(), c.range);
    }
    prologue = [=, this, &target, &s](Value* index) {
      std::vector<Value*> items;
      if (enumerate) items.push_back(index);
      for (Value* seq : seqs) {
        if (seq->type()->kind() == TypeKind::List) {
          items.push_back(graph_.insert_op(OpId::getitem_list, {seq, index}, seq->type()->element(),
                                           s.iter->range));
        } else {
          Value* zero = constant(IValue(int64_t{0}), Type::int_(), s.iter->range);
          items.push_back(
              graph_.insert_op(OpId::select, {seq, zero, index}, Type::tensor(), s.iter->range));
        }
      }
      std::vector<TypePtr> types;
      for (Value* v : items) types.push_back(v->type());
      Node* tup = graph_.insert(graph_.create(OpId::TupleConstruct, items, 1));
      tup->output()->set_type(Type::tuple(types));
      assign_target(target, tup->output(), s.target->range);
    };
  } else {
    Value* seq = emit_expr(iter);
    TypePtr t = seq->type();
    if (std::optional<DictIteration> it = dict_iteration(seq, iter.range)) {
      trip = it->size;
      prologue = [=, this, &target, &s](Value* index) {
        assign_target(target, dict_iteration_item(*it, index, s.iter->range), s.target->range);
      };
      after_normal_exit = [=, this, &s] { check_dict_size(*it, s.iter->range); };
    } else if (t->kind() == TypeKind::List) {
      trip = graph_.insert_op(OpId::len_list, {seq}, Type::int_(), iter.range);
      prologue = [=, this, &target, &s](Value* index) {
        Value* item =
            graph_.insert_op(OpId::getitem_list, {seq, index}, t->element(), s.iter->range);
        assign_target(target, item, s.target->range);
      };
    } else if (t->is_tensor()) {
      trip = graph_.insert_op(OpId::len_tensor, {seq}, Type::int_(), iter.range);
      prologue = [=, this, &target, &s](Value* index) {
        Value* zero = constant(IValue(int64_t{0}), Type::int_(), s.iter->range);
        Value* row =
            graph_.insert_op(OpId::select, {seq, zero, index}, Type::tensor(), s.iter->range);
        assign_target(target, row, s.target->range);
      };
    } else {
      compile_error(iter.range, "cannot iterate over a value of type " + t->str() +
                                    " (a for loop takes range(...), a list, a dict or a tensor)");
    }
  }
  Value* yes = constant(IValue(true), Type::bool_(), s.range);
  if (!progress_desc) {
    emit_loop(trip, yes, s.body, s.range, prologue, nullptr, after_normal_exit);
    return;
  }
  Value* handle =
      graph_.insert_op(OpId::progress_start, {trip, progress_desc}, Type::int_(), s.iter->range);
  auto report = [=, this, &s](Value* index) {
    graph_.insert(graph_.create(OpId::progress_step, {handle, index}, 0))->set_range(s.iter->range);
    prologue(index);
  };
  emit_loop(trip, yes, s.body, s.range, report, nullptr, after_normal_exit);
  graph_.insert(graph_.create(OpId::progress_end, {handle}, 0))->set_range(s.iter->range);
}

}  // namespace tsl
