// Type checking and SSA emission: the AST of a function or of one top-level
// statement becomes a typed ir::Graph. See Note [Emitting control flow].
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "frontend/ast.h"
#include "frontend/compilation_unit.h"
#include "frontend/schema_matching.h"
#include "ir/ir.h"
#include "runtime/kernels/dict_ops.h"

namespace tsl {

// Note [Emitting control flow]
// The IR has only structured control flow (If and Loop with blocks), so `return`,
// `break` and `continue` are lowered while emitting, with flags that are ordinary
// variables of the environment: `$ret` (the value returned), `$returned`, `$broke`
// and `$continued`. After a statement that may exit, the rest of its block runs
// inside `If(not exited)`; when one branch of an `if` always exits, the rest is
// emitted into the other branch directly (which also keeps `if x is None: return`
// refining x for the rest). A loop whose body may break or return carries the flags
// and stops when they are set. Variables assigned in a loop body that exist before
// the loop are loop-carried; variables assigned in a branch become outputs of the If
// when both paths define them. The flags cost nothing when no statement needs them.

// Which exits a statement may take: return anywhere inside; break/continue that
// leave the innermost enclosing loop (not those of loops nested in it).
struct Exits {
  bool ret = false, brk = false, cont = false;
  bool any() const { return ret || brk || cont; }
};

// An Optional name a condition refines (`x is not None`): where the condition holds
// (when_true) or where it fails.
struct Refinement {
  std::string name;
  bool when_true;
};

struct Binding {
  Value* value;
  SourceRange range;  // where it was assigned
};

class Scope {
 public:
  // Only the innermost scope is assigned or refined, so a scope's ancestors do not
  // change while it lives: lookups skip the ancestors that were empty when it was
  // made. An elif chain nests a scope per branch, and each condition's names walked
  // all of them: 20,000 branches compiled in 10 s, most of it here.
  explicit Scope(Scope* parent) : parent_(parent), lookup_parent_(parent) {
    while (lookup_parent_ && lookup_parent_->vars_.empty() && lookup_parent_->refined_.empty())
      lookup_parent_ = lookup_parent_->lookup_parent_;
  }
  Binding* find(const std::string& name);
  // An assignment ends a refinement of the name in this scope.
  void set(const std::string& name, Binding b) {
    refined_.erase(name);
    vars_[name] = std::move(b);
  }
  // `x` known not to be None in this scope from here on (`if x is not None:`,
  // `assert x is not None`): it shadows the scope's own binding until reassigned.
  void refine(const std::string& name, Binding b) { refined_[name] = std::move(b); }
  const std::unordered_map<std::string, Binding>& own() const { return vars_; }
  Scope* parent() const { return parent_; }

 private:
  Scope* parent_;
  Scope* lookup_parent_;  // the nearest ancestor that had names when this was made
  std::unordered_map<std::string, Binding> vars_;
  std::unordered_map<std::string, Binding> refined_;
};

// The op namespace of a module whose functions are TSL builtins: opflags::TORCH for
// "torch", NNF for "torch.nn.functional", MATH for "math"; 0 for any other.
uint32_t builtin_namespace(const std::string& module);
// Whether `module.name` is a builtin (an op of that namespace, or torch's transforms and
// sugar such as torch.addcmul), as `from module import name` binds it.
bool is_builtin_of(const std::string& module, const std::string& name);

// The attributes and methods a value of static type `t` has in TSL, by name, as the
// emitter resolves `v.name`: a Tensor's (the op table's methods and those the emitter
// adds, its attributes), a list's, a dict's, a str's; none for other types. The REPL's
// completion offers them; a "has no method" error lists them.
std::vector<std::string> member_names(const Type& t);
// dict's methods (emit_dict_method).
std::vector<std::string> dict_method_names();

// N for a `BroadcastingListN[T]` annotation (N = 1, 2 or 3), else 0.
int broadcasting_list_length(const ast::Expr& annotation);

// The ops of the table reachable under one base name in one namespace (opflags::METHOD,
// GLOBAL, TORCH, NNF, MATH; 0: every namespace), in table order.
const std::vector<OpId>& ops_named(const std::string& base, uint32_t flag);
// The base name of the rows of a Python builtin: the conversions float, int and bool are
// the Float, Int and Bool rows; other names are their own.
std::string builtin_op_name(const std::string& name);
// A function transform (`grad`, `vmap`, ...) or graph(f), which shows one.
bool is_transform(const std::string& name);
// The in-place overloads of a binary operator's ops (`x += y` on a tensor is add_),
// in table order; empty where the table has none (`x **= 2` computes out of place).
const std::vector<OpId>& inplace_overloads(ast::BinOp op);

// Something a name or attribute can stand for.
struct Sugared {
  enum class Kind { Value, Module, UserFunction, Builtin, TypingName };
  Kind kind = Kind::Value;
  Value* value = nullptr;
  std::string name;  // module path ("torch.nn.functional"), builtin or typing name
  FunctionDecl* function = nullptr;
  uint32_t namespace_flag = 0;  // for Builtin: which op namespace (GLOBAL, TORCH, NNF, MATH)
};

class Emitter {
 public:
  enum class Mode { Function, TopLevel };

  Emitter(CompilationUnit& unit, Graph& graph, Mode mode);

  // Function mode: emits the body of `decl` into the graph (params first, then the
  // hidden globals it reads) and returns the return type.
  TypePtr emit_function(const FunctionDecl& decl);
  // Top-level mode: emits one statement. In REPL mode an expression statement's value
  // becomes output "$echo".
  void emit_toplevel(const ast::Stmt& stmt, bool repl_mode);

  // Globals read (function: hidden inputs; top level: inputs) in input order.
  const std::vector<std::string>& global_inputs() const { return global_inputs_; }
  const std::vector<TypePtr>& global_input_types() const { return global_input_types_; }
  // Top level: the names of the graph's outputs.
  const std::vector<std::string>& outputs() const { return output_names_; }
  // Top level: the variables a compound statement publishes as it assigns them, with
  // their types (Note [Top-level assignments survive errors] in runtime/kernels/output.h).
  const std::vector<std::pair<std::string, TypePtr>>& published() const { return published_; }

  // ---- Expressions (emit_expr.cpp and the other emit_*.cpp)
  Value* emit_expr(const ast::Expr& e, const TypePtr& hint = nullptr);

 private:
  // ---- Statements: lists (emitter.cpp), simple statements and assignments
  // (emit_statements.cpp), branches (emit_branches.cpp), loops (emit_loops.cpp)
  // Emits statements[i..]; returns whether the list always exits.
  bool emit_stmts(const ast::Body& body, size_t first = 0);
  bool emit_stmt(const ast::Body& body, size_t i);
  void emit_assign(const ast::Assign& s);
  void emit_aug_assign(const ast::AugAssign& s);
  Value* emit_inplace(ast::BinOp op, Value* self, Value* rhs, const SourceRange& range);
  void emit_setitem(const ast::Subscript& target, Value* v, const SourceRange& range);
  void emit_aug_setitem(const ast::Subscript& target, ast::BinOp op, const ast::Expr& value,
                        const SourceRange& range);
  void write_indexed(Node* read, Value* v, const SourceRange& range);
  Value* list_index(const ast::Subscript& target);
  void rebind_updated(const ast::Expr& base_expr, Value* base);
  void emit_ann_assign(const ast::AnnAssign& s);
  void assign_target(const ast::Expr& target, Value* v, const SourceRange& range,
                     const TypePtr& declared = nullptr);
  bool emit_if(const ast::If& s, const ast::Body& body, size_t rest);
  bool emit_rest(const Exits& may, const ast::Body& body, size_t rest, const SourceRange& range);
  std::vector<Refinement> refinements_of(const ast::Expr& cond);
  void refine(const std::vector<Refinement>& refinements, bool holds, const SourceRange& range);
  Value* emit_refined(const ast::Expr& e, Block* b, const std::vector<Refinement>& refinements,
                      bool holds, const SourceRange& range);
  void emit_while(const ast::While& s);
  void emit_for(const ast::For& s);
  void emit_return(const ast::Return& s);
  void emit_assert(const ast::Assert& s);
  void emit_raise(const ast::Raise& s);
  void emit_with(const ast::With& s);
  void emit_expr_stmt(const ast::ExprStmt& s);

  // Emits `then_fn` and `else_fn` into the two blocks of an If on `cond` and merges
  // the variables they assign. Returns the If node.
  Node* emit_branches(Value* cond, const SourceRange& range, const std::function<bool()>& then_fn,
                      const std::function<bool()>& else_fn, bool* then_exits = nullptr,
                      bool* else_exits = nullptr);
  // A loop: `trip_count` iterations at most while the condition holds; `body_fn`
  // emits the body given the trip index; `cond_fn` the condition for the next
  // iteration (null: true). Carries the variables the body assigns.
  // `after_normal_exit` (may be null) runs after the loop unless a break or return ended
  // it (Python's iterator protocol calls next() once more then).
  void emit_loop(Value* trip_count, Value* first_cond, const ast::Body& body,
                 const SourceRange& range, const std::function<void(Value*)>& prologue,
                 const ast::Expr* while_cond,
                 const std::function<void()>& after_normal_exit = nullptr);
  void emit_after_normal_exit(const Exits& may, const SourceRange& range,
                              const std::function<void()>& fn);
  // `range(...)` as the iterable of a for loop or a comprehension: its start, step and
  // trip count; range_item is its value at a trip index.
  struct RangeLoop {
    Value* start;
    Value* step;
    Value* trip;
    bool simple;  // range(n): the value is the index
  };
  RangeLoop emit_range_loop(const ast::Call& c);
  Value* range_item(const RangeLoop& r, Value* index, const SourceRange& range);
  Value* exit_flag_condition();  // not(returned or broke or continued), or null

  // ---- Names (emitter.cpp)
  Binding* lookup_local(const std::string& name);
  Sugared resolve_name(const ast::Name& n);
  Value* read_variable(const std::string& name, const SourceRange& range);
  // Inside `with no_grad():` in a compiled function, a tensor read (a name, a list,
  // tuple or dict element) is detached, so what the block computes has no gradient
  // (as in PyTorch and functorch) and in-place updates through it stay in place.
  Value* read_under_no_grad(Value* v, const SourceRange& range);
  void write_variable(const std::string& name, Value* v, const SourceRange& range);
  Value* global_input(const std::string& name, const SourceRange& range);
  [[noreturn]] void undefined_name(const std::string& name, const SourceRange& range);

  // ---- Names and attributes (emit_names.cpp)
  Sugared emit_sugared(const ast::Expr& e);
  Sugared sugared_attribute(const Sugared& base, const ast::Attribute& a);
  Sugared sugar_value(Value* v);
  Value* as_value(const Sugared& s, const SourceRange& range);

  // ---- Calls (emit_call.cpp)
  Value* emit_call(const ast::Call& c);
  std::vector<CallArg> emit_call_args(const ast::Call& c);
  Value* emit_user_call(FunctionDecl& decl, const std::vector<CallArg>& args,
                        const SourceRange& range);
  Value* emit_builtin_call(const Sugared& callee, std::vector<CallArg> args, const ast::Call& c);
  Value* emit_ops(const std::vector<OpId>& candidates, const std::vector<CallArg>& args,
                  const SourceRange& range, const std::string& display);
  // The node of a matched overload at the insertion point; its result (None, the value,
  // or a tuple of its results).
  Value* emit_matched(const MatchedOp& m, const SourceRange& range);
  FunctionDecl* builtin_value(const Sugared& b, const SourceRange& range);

  // ---- Transforms as written (emit_transform.cpp)
  Sugared emit_transform(autodiff::TransformKind kind, const ast::Call& c);
  // A call of a transform by name (`grad(f)`, `functorch.vjp(f, x)`, `graph(f)`).
  Value* emit_transform_call(const std::string& name, const ast::Call& c);
  Value* emit_graph_of(const ast::Call& c);
  Value* emit_jvp_call(const ast::Call& c);
  Value* emit_vjp_call(const ast::Call& c);
  Value* emit_closure_call(const Sugared& callee, const std::vector<CallArg>& args,
                           const SourceRange& range);
  FunctionDecl* transformed_function(const Sugared& fn, autodiff::TransformKind kind,
                                     const ast::Expr& e);
  // emit_vmap.cpp: vmap(f, in_dims, out_dims), and functorch's checks of the arguments
  // a vmapped function is called with.
  Sugared emit_vmap(const ast::Call& c);
  void check_vmap_call(const FunctionDecl& decl, const std::vector<CallArg>& args,
                       const SourceRange& range);

  // ---- Members (emit_members.cpp)
  Value* emit_attribute_value(Value* v, const ast::Attribute& a);
  Value* emit_method_call(Value* self, const std::string& name, std::vector<CallArg> args,
                          const ast::Call& c);

  // ---- Operators (emit_operators.cpp)
  // The first of `overloads` (an operator's ops, in table order) that takes `operands`,
  // inserted; null (nothing inserted) when none does. Note [Operators are overloads].
  Value* emit_operator(const std::vector<OpId>& overloads, std::vector<Value*> operands,
                       const SourceRange& range);
  Value* emit_binary(ast::BinOp op, Value* lhs, Value* rhs, const SourceRange& range);
  Value* emit_compare(const ast::Compare& c);
  Value* emit_compare_pair(ast::CmpOp op, Value* lhs, Value* rhs, const SourceRange& range);
  Value* emit_unary(const ast::Unary& u);
  Value* emit_boolop(const ast::BoolOp& b);
  Value* emit_ifexp(const ast::IfExp& e);

  // ---- Subscripts (emit_subscript.cpp) and comprehensions (emit_comprehension.cpp)
  Value* emit_subscript(const ast::Subscript& s);
  Value* emit_tensor_index(Value* t, const ast::Subscript& s);
  Value* emit_listcomp(const ast::ListComp& c);
  Value* emit_dictcomp(const ast::DictComp& c);
  void emit_comprehension_loop(const ast::Expr& target, const ast::Expr& iter,
                               const ast::Expr* cond, const SourceRange& range,
                               const std::function<void()>& each);
  void bind_comprehension_target(const ast::Expr& target, Value* item, Scope& scope);

  // ---- Literals and conversions (emit_expr.cpp)
  Value* emit_fstring(const ast::FString& f);
  Value* emit_list(const ast::ListExpr& l, const TypePtr& hint);
  Value* to_bool(Value* v, const SourceRange& range, const char* what);
  Value* constant(IValue v, TypePtr t, const SourceRange& range);
  Value* none(const SourceRange& range) { return constant(IValue(), Type::none(), range); }
  Value* convert_to(Value* v, const TypePtr& target, const SourceRange& range,
                    const std::string& what);

  // ---- Dicts (emit_dict.cpp; Note [Dicts] in runtime/kernels/dict_ops.cpp)
  Value* emit_dict(const ast::DictExpr& d, const TypePtr& hint);
  Value* empty_dict(const TypePtr& type, const SourceRange& range);
  Value* dict_key(Value* dict, Value* key, const SourceRange& range);
  Value* dict_value(Value* dict, Value* v, const SourceRange& range, const std::string& what);
  Value* emit_dict_getitem(Value* dict, const ast::Subscript& s);
  void emit_dict_setitem(Value* dict, const ast::Subscript& target, Value* v,
                         const SourceRange& range);
  void emit_dict_aug_setitem(Value* dict, const ast::Subscript& target, ast::BinOp op,
                             const ast::Expr& value, const SourceRange& range);
  Value* emit_dict_contains(Value* key, Value* dict, bool negate, const SourceRange& range);
  Value* emit_dict_equal(Value* a, Value* b, bool negate, const SourceRange& range);
  Value* emit_dict_method(Value* self, const std::string& name, const std::vector<CallArg>& args,
                          const ast::Call& c);
  Value* emit_list_call(const std::vector<CallArg>& args, const SourceRange& range);
  Value* emit_dict_call(const ast::Call& c, const TypePtr& hint);
  // A for loop or comprehension over a dict (`d`, `d.keys()`, `d.values()`,
  // `d.items()`): a snapshot of the keys, each value read when its turn comes.
  struct DictIteration {
    Value* dict;
    Value* keys;    // the keys when the loop starts
    Value* size;    // their number: the trip count
    DictOp yields;  // Keys, Values or Items
  };
  std::optional<DictIteration> dict_iteration(Value* seq, const SourceRange& range);
  Value* dict_iteration_item(const DictIteration& it, Value* index, const SourceRange& range);
  void check_dict_size(const DictIteration& it, const SourceRange& range);
  void publish(const std::string& name, Value* v, const SourceRange& range);

 public:
  // Types written in annotations: int, List[int], Optional[Tensor], torch.Tensor.
  TypePtr resolve_type(const ast::Expr& e);

 private:
  CompilationUnit& unit_;
  Graph& graph_;
  Mode mode_;
  // The module whose names this code sees: "" for the program, "nn." inside stdlib's
  // nn (Note [Modules] in compilation_unit.h). The unit keeps a module's functions,
  // variables and imports under qualified names; `qualified(id)` is where `id` is.
  std::string namespace_;
  std::string qualified(const std::string& id) const { return namespace_ + id; }
  // The top-level name of a qualified global of this module ("nn._EPS" -> "_EPS").
  std::string unqualified(const std::string& q) const;
  Sugared sugar_import(const ImportedName& imp);
  Sugared user_function(FunctionDecl* fn, const std::string& name);
  Value* emit_sugared_call(const Sugared& callee, const ast::Call& c);
  const ast::Expr* progress_iterable(const ast::Expr& iter, Value*& desc);
  Value* emit_addc(Value* self, const std::string& name, const std::vector<CallArg>& args,
                   const SourceRange& range);
  bool repl_mode_ = false;
  // The names the top-level statement being emitted assigns (collect_assigned).
  std::vector<std::string> toplevel_assigned_;
  std::vector<std::unique_ptr<Scope>> scopes_;
  Scope* scope_ = nullptr;
  Block* block_ = nullptr;  // current block

  // Function mode
  const FunctionDecl* decl_ = nullptr;
  std::unordered_set<std::string> locals_;  // names assigned anywhere in the body
  TypePtr return_type_;                     // declared or inferred so far
  SourceRange return_range_;
  TypePtr pending_return_type_;  // placeholder type before inference
  bool needs_return_flag_ = false;
  // always_exits's answers, by statement body (emit_scans.h).
  std::unordered_map<const ast::Body*, bool> exits_memo_;

  // Exit flags active at this point of emission.
  int loop_depth_ = 0;
  int compound_depth_ = 0;  // > 0 inside if/while/for/with
  int no_grad_depth_ = 0;   // > 0 inside `with no_grad():`
  // The detached reads of tensors inside `with no_grad():` (their autograd attributes
  // are read from the tensor itself).
  std::unordered_set<const Value*> no_grad_reads_;
  struct LoopContext {
    bool may_break = false;
    bool may_continue = false;
  };
  std::vector<LoopContext> loops_;

  // One static type per variable (function mode, and inside compound top-level
  // statements): the first assignment's type and place.
  std::unordered_map<std::string, Binding> declared_;
  std::unordered_map<std::string, TypePtr> annotated_;  // x: Optional[Tensor] = None
  // Why a name is not usable here ("assigned only in the 'if' branch at line 4").
  std::unordered_map<std::string, std::string> maybe_undefined_;

  std::vector<std::string> global_inputs_;
  std::vector<TypePtr> global_input_types_;
  std::unordered_map<std::string, Value*> global_values_;
  std::vector<std::string> output_names_;
  std::vector<std::pair<std::string, TypePtr>> published_;
};

}  // namespace tsl
