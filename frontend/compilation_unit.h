// The state of one TSL program (a script or a REPL session): its top-level
// variables, its functions, its imports. Runs top-level statements one at a time and
// compiles functions lazily, at their first use. See Note [Top-level code].
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "ir/autodiff/differentiate.h"
#include "ir/autodiff/transforms.h"
#include "ir/ir.h"
#include "runtime/exec/function.h"

namespace tsl {

// Note [Top-level code]
// Each top-level statement (a whole `for` loop or `if` included) is compiled into a
// graph "<module>" of its own and run at once. The top-level variables it reads are
// the graph's inputs, typed by their current values (so a top-level name may be
// rebound to another type between statements, as in Python); the variables it
// assigns are its outputs, written back afterwards. Functions are compiled on first
// use: the top-level variables a function reads become hidden inputs of its graph,
// passed at each call with their values at that time.

struct GlobalVar {
  IValue value;
  TypePtr type;  // static type (refined from the value when read)
};

// Per parameter, the constant str or None a call passes, or nullopt (see Note
// [Transforms of constant modes] in compile_transform.cpp).
using ConstantArgs = std::vector<std::optional<IValue>>;

// A `def`: its AST, signature and compiled versions.
struct FunctionDecl {
  std::string name;                     // qualified: "nn.linear" for a module's function
  std::string scope;                    // the module its body's names resolve in: "" or "nn."
  std::shared_ptr<ast::Module> module;  // keeps the AST alive
  const ast::FunctionDef* def = nullptr;
  std::vector<std::string> param_names;
  std::vector<TypePtr> param_types;
  std::vector<std::optional<IValue>> defaults;
  // Per parameter, N for a `BroadcastingListN[T]` annotation (TorchScript's: an int or
  // float argument is the list of N copies, as F.max_pool2d's kernel_size=3), else 0.
  std::vector<int> broadcast_lengths;
  TypePtr declared_return;  // null when inferred

  // A function made by a transform (`grad(f, argnums=1)`) rather than by `def`: which
  // transform, of which function.
  struct Transform : autodiff::TransformSpec {
    std::shared_ptr<FunctionDecl> inner;
    // vjp: the declaration of the vjp_fn it returns (a closure over the forward's
    // captured values).
    std::shared_ptr<FunctionDecl> companion;
  };
  std::optional<Transform> transform;
  // The static type of this function as a value (`g = grad(f)`); see FunctionSignature.
  TypePtr value_type;

  // One compiled version per set of global types it was compiled against.
  struct Compiled {
    IntrusivePtr<Function> function;
    TypePtr return_type;
    std::vector<std::string> hidden_globals;  // extra graph inputs, after the params
    std::vector<TypePtr> hidden_types;
    uint64_t generation = 0;
    // A transform's version specialized for constant str and None arguments (Note
    // [Transforms of constant modes]): one entry per parameter, the constant or nullopt.
    ConstantArgs constant_args = {};
  };
  std::vector<Compiled> compiled;
};

// Which form of a function's graph the dumps show.
enum class GraphView {
  AsWritten,  // as compiled from the source (`--dump=ir`, `:graph`)
  Optimized,  // after the optimization pipeline (`--dump=opt`, `:opt`)
  Passes,     // the pipeline pass by pass, each change a line diff (`:passes`)
};

// A function as a value (`g = grad(f)`): calls through it are resolved statically,
// through the target of its type (see FunctionSignature::target).
class FunctionRef : public ObjectImpl {
 public:
  explicit FunctionRef(std::shared_ptr<FunctionDecl> decl) : decl_(std::move(decl)) {}
  const std::shared_ptr<FunctionDecl>& decl() const { return decl_; }
  std::string repr() const override { return "<function " + decl_->name + ">"; }

 private:
  std::shared_ptr<FunctionDecl> decl_;
};

// The stdlib module of torch.nn.functional's functions written in TSL (Note
// [torch.nn.functional in TSL] in frontend/modules.cpp).
inline constexpr const char* kFunctionalModule = "torch_functional";
inline constexpr const char* kTensorModule = "torch_tensor";

// A name brought in by `import` / `from ... import`.
struct ImportedName {
  // Builtin: an op of a torch namespace (`from torch.nn.functional import relu`).
  enum Kind { Module, UserModule, TypingName, Transform, Builtin } kind;
  std::string target;  // "torch.nn.functional", "nn", "List", "grad", ...
  uint32_t space = 0;  // a Builtin's namespace (opflags::TORCH, NNF, MATH)
};

// Note [Modules]
// `import nn` runs nn.tsl once per process (the first import; later ones reuse it
// unless the file changed since, so a REPL picks up edits) in the same unit as the
// program, with its names kept under qualified names: nn's `def linear` is the
// function "nn.linear", its variable `_EPS` the global "nn._EPS", its own `import
// torch` the import "nn.torch". Code of a module (its functions, FunctionDecl::scope,
// and its top-level statements, CompilationUnit::scope) resolves a name `x` as
// "nn.x", so modules never see each other's or the program's names. `nn.linear` in
// the program reaches the qualified name through the import; `from nn import linear`
// binds "linear" to the same declaration (a variable: its value at import). A module's
// functions are ordinary functions: called, inlined, transformed and shown like any
// other, with errors in the module's file. Files are found in the importing file's
// folder, then the folders of TSL_PATH, then the stdlib folder next to the binary
// (build tree) or under ../share/tsl (installed).
struct LoadedModule {
  std::string path;
  int64_t mtime_ns = 0;  // the file's modification time and size when loaded
  uintmax_t size = 0;
};

// Evaluates a constant-like expression (a default argument) at the top level.
IValue evaluate_default(class CompilationUnit& unit, const ast::Expr& e, const TypePtr& type);

class CompilationUnit {
 public:
  CompilationUnit();
  ~CompilationUnit();
  CompilationUnit(const CompilationUnit&) = delete;
  CompilationUnit& operator=(const CompilationUnit&) = delete;

  // Parses and runs a whole source text; REPL mode prints the value of expression
  // statements. Throws SourceError on the first error (state up to it is kept).
  void run_source(SourcePtr source, bool repl_mode);
  // Runs one parsed top-level statement.
  void run_statement(const std::shared_ptr<ast::Module>& module, const ast::Stmt& stmt,
                     bool repl_mode);

  // The graph a top-level statement compiles to (for --dump=ir of top-level code).
  std::shared_ptr<Graph> compile_statement(
      const std::shared_ptr<ast::Module>& module, const ast::Stmt& stmt, bool repl_mode,
      std::vector<std::string>* inputs = nullptr, std::vector<std::string>* outputs = nullptr,
      std::vector<std::pair<std::string, TypePtr>>* published = nullptr);

  // ---- Used by the emitter
  const GlobalVar* find_global(const std::string& name) const;
  FunctionDecl* find_function(const std::string& name);
  // torch.nn.functional's function `name` written in TSL (stdlib/torch_functional.tsl,
  // loaded on first use), or null. See Note [torch.nn.functional in TSL].
  FunctionDecl* functional_in_tsl(const std::string& name, const SourceRange& use);
  // The same for torch's functions and Tensor methods written in TSL
  // (stdlib/torch_tensor.tsl: `torch.argsort(x)`, `x.argsort()`).
  FunctionDecl* tensor_function_in_tsl(const std::string& name, const SourceRange& use);
  const ImportedName* find_import(const std::string& name) const;
  const std::map<std::string, ImportedName>& imports() const { return imports_; }
  // Compiles `decl` for the current global types (or returns the cached version);
  // detects recursion.
  // `constants`: for a transform, the call's constant str arguments (Note [Transforms of
  // constant modes]); ignored for a `def`.
  const FunctionDecl::Compiled& compile_function(FunctionDecl& decl, const SourceRange& use,
                                                 const ConstantArgs& constants = {});

  // The declaration behind a function name (shared, so transforms can hold it).
  std::shared_ptr<FunctionDecl> function_ptr(const FunctionDecl* decl);
  // `kind(inner, argnums)` (compile_transform.cpp): the same declaration for the same
  // arguments, so that `grad(f)` written twice is one function with one compiled version.
  std::shared_ptr<FunctionDecl> make_transform(autodiff::TransformKind kind,
                                               const std::shared_ptr<FunctionDecl>& inner,
                                               std::vector<size_t> argnums, bool argnums_tuple,
                                               const SourceRange& range);
  // vmap(inner, in_dims, out_dims), described by `spec` (kind Vmap): the same
  // declaration for the same spec. Errors in in_dims point at `range`.
  std::shared_ptr<FunctionDecl> make_vmap(const std::shared_ptr<FunctionDecl>& inner,
                                          FunctionDecl::Transform spec, const SourceRange& range);
  // The function a name stands for: a def, or a variable holding a function value
  // (`g = grad(f)`); null when neither.
  FunctionDecl* resolve_function(const std::string& name);
  // A builtin used as a value (`loss_fn = F.cross_entropy`, `grad(torch.sin)`,
  // `vjp(torch.matmul, a, b)`): a function made once per builtin, `def NAME(params):
  // return BUILTIN(params)` over the required positional parameters of its first
  // overload (`text_params`, spelled as in source, e.g. "input, target"). See
  // Note [Builtins as values] in compilation_unit.cpp.
  std::shared_ptr<FunctionDecl> builtin_function(const std::string& name,
                                                 const std::string& qualified,
                                                 const std::string& text_params,
                                                 const std::string& call_args);
  // The type of `decl` as a value.
  TypePtr function_value_type(FunctionDecl& decl);

  // ---- The text of graphs (function_views.cpp)
  // The IR of `decl` as text (`graph(f)`). `view` picks the graph as written,
  // optimized, or the optimization pass by pass. For a transform (`grad(f)`): as
  // written, the split gradient of f; otherwise the graph the transform runs.
  std::string graph_text(FunctionDecl& decl, const SourceRange& use,
                         GraphView view = GraphView::AsWritten);
  // The gradient graph of `decl` for the Tensor parameters `wrt` (all when empty):
  // the forward graph with the values it captures for the backward, then the
  // backward graph (`--dump=grad`, `:grad f`), each in `view`. `dot` draws them
  // (Graphviz) instead, as written or optimized.
  std::string gradient_text(FunctionDecl& decl, std::vector<size_t> wrt, const SourceRange& use,
                            bool dot = false, GraphView view = GraphView::AsWritten);
  // The forward and backward graphs of `decl`'s gradient for the parameters `wrt`, as
  // gradient_text shows them; `num_seeds`: how many outputs take an incoming gradient.
  autodiff::Gradient gradient_graphs(FunctionDecl& decl, const std::vector<size_t>& wrt,
                                     const SourceRange& use, size_t* num_seeds = nullptr);

  // ---- Used by the driver and the REPL
  std::map<std::string, GlobalVar>& globals() { return globals_; }
  const std::map<std::string, std::shared_ptr<FunctionDecl>>& functions() const {
    return functions_;
  }
  // The functions made by transforms (`grad(f)`), in the order they were made.
  const std::vector<std::shared_ptr<FunctionDecl>>& transforms() const { return transforms_; }
  void set_global(const std::string& name, IValue value, TypePtr type);
  // The stream REPL results are printed to (std::cout by default).
  void set_echo(std::ostream* out) { echo_ = out; }
  // Forgets all variables, functions and imports (REPL :reset).
  void reset();
  // Runs module `name` (a TSL module, not torch/math) again from its file, and rebinds
  // the names taken from it by `from NAME import ...` (REPL :reload NAME).
  void reload_module(const std::string& name, const SourceRange& use);

  // ---- Modules (Note [Modules])
  // The qualified-name prefix of the code running now: "" for the program.
  const std::string& scope() const { return scope_; }
  bool is_user_module(const std::string& name) const { return modules_.count(name) > 0; }
  const std::map<std::string, LoadedModule>& modules() const { return modules_; }
  // The folders `import` searches for a module imported from `from`'s file.
  static std::vector<std::string> module_search_path(const SourceRange& from);

 private:
  void define_function(const std::shared_ptr<ast::Module>& module, const ast::FunctionDef& def);
  // Drops the transforms of functions that were redefined, unless a variable holds one.
  void prune_transforms();
  // After a def or a reload: drops every compiled version (all of an older generation)
  // and the transforms no name reaches.
  void drop_stale_versions();
  std::shared_ptr<FunctionDecl> declare(const std::shared_ptr<ast::Module>& module,
                                        const ast::FunctionDef& def);
  std::map<std::string, std::shared_ptr<FunctionDecl>> builtin_values_;
  void run_import(const ast::Stmt& stmt);
  // Loads module `name` unless loaded and unchanged; `use` is the import.
  void load_module(const std::string& name, const SourceRange& use);
  void run_module_file(const std::string& name, const std::string& path, const SourceRange& use);
  // Binds `bind` (qualified) to NAME of module `module`, as `from module import NAME`.
  void bind_from(const std::string& module, const std::string& name, const std::string& bind,
                 const SourceRange& use);
  // Drops every name of module `name`.
  FunctionDecl* stdlib_function(const char* module, const std::string& name,
                                const SourceRange& use);
  void forget_module(const std::string& name);
  void drop_compiled_versions();
  // `bind` no longer holds what a `from M import` gave it: a reload leaves it alone.
  void forget_from_import(const std::string& bind) {
    std::erase_if(from_imports_, [&](const FromImport& f) { return f.bind == bind; });
  }
  // frontend/compile_transform.cpp: f compiled, inlined and specialized, then the
  // transform's graph (Note [Transforms as graph functions] in ir/autodiff/transforms.h).
  const FunctionDecl::Compiled& compile_transform(FunctionDecl& decl, const SourceRange& use,
                                                  const ConstantArgs& constants);
  std::shared_ptr<Graph> transform_graph(const Graph& forward, const FunctionDecl::Transform& t,
                                         const autodiff::TransformedFunction& f,
                                         const ConstantArgs& constants);
  autodiff::VjpClosure vjp_closure(FunctionDecl& vjp_fn, const std::shared_ptr<Graph>& backward,
                                   const TypePtr& cotangent);
  std::shared_ptr<Graph> hessian_of(const Graph& forward, const FunctionDecl::Transform& t,
                                    const autodiff::TransformedFunction& f,
                                    const ConstantArgs& constants);

  std::map<std::string, GlobalVar> globals_;
  std::map<std::string, std::shared_ptr<FunctionDecl>> functions_;
  std::map<std::string, ImportedName> imports_;
  std::vector<std::shared_ptr<FunctionDecl>> transforms_;  // made by make_transform
  std::vector<FunctionDecl*> compiling_;                   // the stack, for recursion errors
  std::string scope_;                                      // Note [Modules]
  std::map<std::string, LoadedModule> modules_;
  std::vector<std::string> loading_;  // the modules being imported, for cycle errors
  struct FromImport {
    std::string module, name, bind;
    SourceRange use;
  };
  std::vector<FromImport> from_imports_;  // rebound by reload_module
  uint64_t generation_ = 1;  // bumped by every def: compiled versions of older ones are stale
  // Set while stdlib/torch_functional.tsl loads in the middle of a compilation: its new
  // qualified names make nothing compiled stale (Note [torch.nn.functional in TSL]).
  bool defining_new_names_ = false;
  bool compiled_since_drop_ = false;  // a version was compiled since drop_stale_versions
  std::ostream* echo_;
};

}  // namespace tsl
