// TSL modules: finding NAME.tsl, running it once under its qualified names, `from M
// import x`, reloading. See Note [Modules] in compilation_unit.h.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "frontend/compilation_unit.h"
#include "frontend/parser.h"
#include "runtime/kernels/files.h"

namespace tsl {
namespace {

namespace fs = std::filesystem;

// The stdlib folder of this binary: `stdlib` beside it (a build tree, where CMake
// links it to the sources) or `../share/tsl/stdlib` (an installed tree).
std::string stdlib_folder() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  for (const fs::path& candidate :
       {exe.parent_path() / "stdlib", exe.parent_path().parent_path() / "share/tsl/stdlib"}) {
    if (fs::is_directory(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
  }
  return "";
}

struct FileStamp {
  int64_t mtime_ns = 0;
  uintmax_t size = 0;
};

FileStamp stamp_of(const std::string& path) {
  std::error_code ec;
  FileStamp s;
  auto t = fs::last_write_time(path, ec);
  if (!ec) s.mtime_ns = static_cast<int64_t>(t.time_since_epoch().count());
  uintmax_t n = fs::file_size(path, ec);
  if (!ec) s.size = n;
  return s;
}

}  // namespace

std::vector<std::string> CompilationUnit::module_search_path(const SourceRange& from) {
  std::vector<std::string> dirs;
  // The importing file's folder; for the REPL, `-c` and stdin, the working folder.
  std::string file = from.source ? from.source->name() : "";
  if (!file.empty() && file[0] != '<') {
    std::string dir = fs::path(file).parent_path().string();
    dirs.push_back(dir.empty() ? "." : dir);
  } else {
    dirs.push_back(".");
  }
  if (const char* env = std::getenv("TSL_PATH")) {
    std::string list = env;
    size_t start = 0;
    while (start <= list.size()) {
      size_t end = list.find(':', start);
      if (end == std::string::npos) end = list.size();
      if (end > start) dirs.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  if (std::string lib = stdlib_folder(); !lib.empty()) dirs.push_back(lib);
  return dirs;
}

void CompilationUnit::load_module(const std::string& name, const SourceRange& use) {
  for (size_t i = 0; i < loading_.size(); ++i) {
    if (loading_[i] != name) continue;
    std::string cycle;
    for (size_t j = i; j < loading_.size(); ++j) cycle += loading_[j] + " imports ";
    compile_error(use, "import cycle: " + cycle + name);
  }
  auto it = modules_.find(name);
  if (it != modules_.end()) {
    FileStamp now = stamp_of(it->second.path);
    if (now.mtime_ns == it->second.mtime_ns && now.size == it->second.size) return;
    // Edited since it was loaded (a REPL session): load it anew.
    reload_module(name, use);
    return;
  }
  std::vector<std::string> dirs = module_search_path(use);
  std::error_code ec;
  for (const std::string& dir : dirs) {
    std::string path = (fs::path(dir) / (name + ".tsl")).lexically_normal().string();
    if (fs::is_regular_file(path, ec)) {
      run_module_file(name, path, use);
      return;
    }
  }
  std::string where;
  for (const std::string& dir : dirs) where += (where.empty() ? "" : ", ") + dir;
  compile_error(use, "no module named '" + name + "' (no " + name + ".tsl in " + where +
                         "; TSL also knows torch, math, time, typing, functorch, os.path)");
}

void CompilationUnit::run_module_file(const std::string& name, const std::string& path,
                                      const SourceRange& use) {
  std::string text;
  try {
    text = read_file_or_throw(path, "import");
  } catch (const SourceError&) {
    throw;
  } catch (const Error& e) {
    compile_error(use, e.what());
  }
  FileStamp stamp = stamp_of(path);
  auto source = std::make_shared<Source>(path, std::move(text));
  std::string saved_scope = std::exchange(scope_, name + ".");
  loading_.push_back(name);
  struct Restore {
    CompilationUnit& unit;
    std::string scope;
    ~Restore() {
      unit.scope_ = std::move(scope);
      unit.loading_.pop_back();
    }
  } restore{*this, std::move(saved_scope)};
  try {
    auto module = std::make_shared<ast::Module>(parse_module(source));
    for (const auto& stmt : module->body) run_statement(module, *stmt, false);
  } catch (SourceError& e) {
    // As in Python, a module whose code failed is not imported.
    forget_module(name);
    e.add_note(use, "while importing '" + name + "' here");
    throw;
  } catch (...) {
    forget_module(name);
    throw;
  }
  modules_[name] = {path, stamp.mtime_ns, stamp.size};
}

// Note [torch.nn.functional in TSL]
// torch.nn.functional's functions that are not ops (l1_loss, huber_loss, hardswish,
// pad, ...) are written in TSL, in stdlib/torch_functional.tsl, with PyTorch's
// signatures and gradients. `F.NAME`, `torch.nn.functional.NAME` and `from
// torch.nn.functional import NAME` find an op first, then this module's function; the
// module loads from the stdlib folder (never from the program's folder) the first time
// one is used, under the qualified names "torch_functional.NAME". That can happen in the
// middle of compiling a function, so its definitions do not bump the generation (they
// are new names: nothing compiled so far can refer to them) and drop no compiled
// version a caller up the stack still holds. torch's own functions and Tensor methods
// that are compositions of ops (argsort, roll, lerp, ...) live the same way in
// stdlib/torch_tensor.tsl: `torch.NAME(x, ...)`, `from torch import NAME` and the method
// `x.NAME(...)` (x as the first argument) find them when no op has the name.
FunctionDecl* CompilationUnit::stdlib_function(const char* module, const std::string& name,
                                               const SourceRange& use) {
  if (!modules_.count(module)) {
    std::string dir = stdlib_folder();
    if (dir.empty()) return nullptr;
    std::string path = dir + "/" + module + ".tsl";
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return nullptr;
    bool saved = std::exchange(defining_new_names_, true);
    struct Restore {
      bool& flag;
      bool value;
      ~Restore() { flag = value; }
    } restore{defining_new_names_, saved};
    run_module_file(module, path, use);
  }
  // Only its public names: `_reduce` is the module's own.
  if (name.empty() || name[0] == '_') return nullptr;
  return find_function(std::string(module) + "." + name);
}

FunctionDecl* CompilationUnit::functional_in_tsl(const std::string& name, const SourceRange& use) {
  return stdlib_function(kFunctionalModule, name, use);
}

FunctionDecl* CompilationUnit::tensor_function_in_tsl(const std::string& name,
                                                      const SourceRange& use) {
  return stdlib_function(kTensorModule, name, use);
}

void CompilationUnit::bind_from(const std::string& module, const std::string& name,
                                const std::string& bind, const SourceRange& use) {
  std::string q = module + "." + name;
  if (auto f = functions_.find(q); f != functions_.end()) {
    std::shared_ptr<FunctionDecl> decl = f->second;
    globals_.erase(bind);
    imports_.erase(bind);
    functions_[bind] = std::move(decl);
    return;
  }
  if (auto g = globals_.find(q); g != globals_.end()) {
    GlobalVar v = g->second;
    set_global(bind, std::move(v.value), std::move(v.type));
    return;
  }
  if (auto i = imports_.find(q); i != imports_.end()) {
    ImportedName imp = i->second;
    functions_.erase(bind);
    globals_.erase(bind);
    imports_[bind] = std::move(imp);
    return;
  }
  compile_error(use, "cannot import name '" + name + "' from '" + module + "' (" +
                         modules_.at(module).path + ")");
}

void CompilationUnit::forget_module(const std::string& name) {
  std::string prefix = name + ".";
  auto in_module = [&](const auto& entry) { return entry.first.starts_with(prefix); };
  std::erase_if(functions_, in_module);
  std::erase_if(globals_, in_module);
  std::erase_if(imports_, in_module);
  modules_.erase(name);
  ++generation_;
}

void CompilationUnit::reload_module(const std::string& name, const SourceRange& use) {
  auto it = modules_.find(name);
  if (it == modules_.end()) compile_error(use, "no module '" + name + "' was imported");
  std::string path = it->second.path;
  // Functions compiled against the old module's declarations are recompiled at
  // their next call (a new generation); the old declarations go with the names.
  forget_module(name);
  run_module_file(name, path, use);
  for (const FromImport& f : from_imports_) {
    if (f.module == name) bind_from(f.module, f.name, f.bind, f.use);
  }
  drop_stale_versions();
}

}  // namespace tsl
