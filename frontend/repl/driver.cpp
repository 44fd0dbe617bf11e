// Command-line parsing and the top-level error handling of `tsl` (LANGUAGE.md §10,
// §11): every error a program can cause ends in a message and an exit status.
#include "frontend/repl/driver.h"

#include "runtime/kernels/files.h"

#include <pthread.h>
#include <unistd.h>
#include <algorithm>

#include <csignal>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "frontend/compilation_unit.h"
#include "frontend/gradient_view.h"
#include "frontend/parser.h"
#include "frontend/repl/code_view.h"
#include "frontend/repl/repl.h"
#include "ir/ir_parser.h"
#include "ir/passes/pass_registry.h"
#include "runtime/exec/function.h"
#include "runtime/exec/interpreter.h"
#include "runtime/exec/profiler.h"
#include "runtime/fusion/codegen.h"
#include "runtime/fusion/native_compiler.h"
#include "runtime/kernels/kernel.h"
#include "runtime/memory/planner.h"
#include "runtime/tensor/cpu_capability.h"
#include "runtime/tensor/cpu_info.h"
#include "runtime/tensor/device_backend.h"
#include "runtime/tensor/parallel.h"

namespace tsl {
namespace {

const char* kUsage =
    "usage: tsl [options] [FILE.tsl [args...]]\n"
    "\n"
    "Runs a TSL script, or starts the REPL when no FILE is given and stdin is a terminal\n"
    "(a non-terminal stdin is read as a script).\n"
    "\n"
    "options:\n"
    "  -c CODE          run CODE as a script\n"
    "  --dump=ast FILE  print the syntax tree and exit\n"
    "  --dump=ir FILE   run FILE quietly, then print the IR of each function\n"
    "  --dump=opt FILE  the same after the optimization pipeline and fusion (what runs)\n"
    "  --dump=grad FILE run FILE quietly, then print the gradient graph of each function\n"
    "                   (forward with its captured values, then backward)\n"
    "  --dump=grad --args 'F(ARGS)' FILE  only F's, specialized to these arguments\n"
    "                   (expressions over FILE's variables), as the REPL's :grad F(ARGS);\n"
    "                   add --values to show each value, --format=dot to draw it\n"
    "  --dump=opt-grad FILE  the gradient graphs after the optimization pipeline\n"
    "  --dump=code FILE the register program of each function and, for one with float\n"
    "                   Tensor parameters, the two-stage program of its gradient\n"
    "  --dump=memplan FILE  run FILE quietly, then print each function's memory plan:\n"
    "                   its intermediates' lifetimes and offsets in one arena\n"
    "  --dump=kernels FILE  run FILE quietly, compiling each fusion kernel at its first\n"
    "                   large run, then print the C++ generated for each\n"
    "  --format=dot     with --dump=grad or opt-grad: Graphviz DOT instead of IR text\n"
    "  --no-opt         run functions as written, without the optimization pipeline\n"
    "                   (for debugging the passes; also TSL_NO_OPT=1)\n"
    "  --no-memplan     take every tensor from the allocator, without memory plans\n"
    "                   (also TSL_NO_MEMPLAN=1)\n"
    "  --profile FILE   run FILE, then print the time per op kind and the slowest nodes,\n"
    "                   the peak of live tensor memory and the planned arenas, on stderr\n"
    "  --ir FILE.ir [--passes=P1,P2]\n"
    "                   read IR text (what --dump=ir prints), run the named passes\n"
    "                   (the verifier after each), print the result (passes below)\n"
    "  --threads N      use N threads for large kernels (default: all cores)\n"
    "  --timeout S      stop any top-level statement (REPL input, script line) that runs\n"
    "                   longer than S seconds, with a TimeoutError (for teaching sessions)\n"
    "  --device D       the default device for new tensors: cpu or cuda\n"
    "  --version        print the version and exit\n"
    "  --help           print this help and exit\n"
    "\n"
    "environment:\n"
    "  TSL_NO_OPT=1, TSL_NO_MEMPLAN=1   as --no-opt, --no-memplan\n"
    "  TSL_FUSION_JIT=async|sync|off   compiled fusion kernels: in the background once\n"
    "                   a group is hot (default), at its first large run, or never\n"
    "  TSL_FUSION_JIT_HOT=N   elements a group computes before it is compiled (16M)\n"
    "  TSL_CACHE_DIR    where compiled kernels are kept (default ~/.cache/tsl)\n"
    "  TSL_CXX          the C++ compiler for them (default: the one TSL was built with)\n"
    "\n"
    "exit status: 0 success, 1 runtime error, 2 compile error or bad usage, 3 internal error\n";

// The usage text with the registered passes (so the list cannot go stale).
std::string usage() {
  std::string out = kUsage;
  out += "\npasses for --passes:\n";
  for (const PassInfo& p : all_passes()) {
    std::string name = "  " + p.name;
    name.resize(std::max<size_t>(name.size() + 1, 23), ' ');
    out += name + p.description + "\n";
  }
  return out;
}

struct Options {
  std::string code;  // -c
  bool has_code = false;
  std::string dump;                 // ast, ir, opt, grad, opt-grad, code
  std::string format = "text";      // text, dot (for --dump=grad and opt-grad)
  std::string ir_file;              // --ir FILE.ir
  std::vector<std::string> passes;  // --passes=a,b
  bool has_passes = false;
  std::string file;
  std::vector<std::string> script_args;
  bool profile = false;   // --profile: a time table per op kind on stderr at the end
  std::string grad_call;  // --args 'f(x, w)' with --dump=grad
  bool values = false;    // --values with --args
};

void on_sigint(int) { g_interrupt_requested = true; }

void install_sigint_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked read returns so the REPL can react
  sigaction(SIGINT, &sa, nullptr);
}

// The text of a program file; false after printing why not ("it is a directory").
bool read_file(const std::string& path, std::string& out) {
  try {
    out = read_file_or_throw(path, "tsl");
    return true;
  } catch (const Error& e) {
    std::cerr << "tsl: error: " << std::string(e.what()).substr(5) << "\n";
    return false;
  }
}

// Runs fn on a thread with a large stack: deep but legal programs (long expression
// chains, nested calls) must not overflow the 8 MiB default of the main thread.
int run_with_big_stack(const std::function<int()>& fn) {
  struct Call {
    const std::function<int()>* fn;
    int result;
  } call{&fn, 0};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, size_t{1} << 30);
  pthread_t thread;
  auto trampoline = [](void* p) -> void* {
    auto* c = static_cast<Call*>(p);
    c->result = (*c->fn)();
    return nullptr;
  };
  if (pthread_create(&thread, &attr, trampoline, &call) != 0) {
    pthread_attr_destroy(&attr);
    return fn();
  }
  // SIGINT must reach the thread that runs fn: its handler interrupts the REPL's
  // blocked read there (a Ctrl-C taken by this waiting thread left the read going on,
  // so Ctrl-C at a `...` prompt did nothing and armed an interrupt for later).
  sigset_t sigint, saved;
  sigemptyset(&sigint);
  sigaddset(&sigint, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigint, &saved);
  pthread_join(thread, nullptr);
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  pthread_attr_destroy(&attr);
  return call.result;
}

// Runs a script's text, mapping every error to its message and exit status.
int run_guarded(const std::function<void()>& body) {
  try {
    body();
    std::cout.flush();
    return kExitOk;
  } catch (const SourceError& e) {
    std::cout.flush();
    std::cerr << for_stderr(e.render()) << std::flush;
    return e.kind() == SourceError::Kind::Compile ? kExitCompileError : kExitRuntimeError;
  } catch (const InternalError& e) {
    std::cout.flush();
    std::cerr << for_stderr(std::string(e.what()) + "\n");
    return kExitInternalError;
  } catch (const Error& e) {
    std::cout.flush();
    std::cerr << for_stderr("error: " + std::string(e.what()) + "\n");
    return kExitRuntimeError;
  } catch (const std::bad_alloc&) {
    std::cout.flush();
    std::cerr << for_stderr("error: out of memory\n");
    return kExitRuntimeError;
  } catch (const std::exception& e) {
    // Any other exception (a library's) is a bug in TSL, reported as one, never an abort.
    std::cout.flush();
    std::cerr << "internal error: " << e.what()
              << "\nThis is a bug in TSL; please report it with the program that triggered it.\n";
    return kExitInternalError;
  }
}

void set_argv(CompilationUnit& unit, const Options& o) {
  std::vector<IValue> argv;
  argv.emplace_back(o.has_code ? std::string("-c") : o.file);
  for (const std::string& a : o.script_args) argv.emplace_back(a);
  unit.set_global("argv", IValue::list(std::move(argv)), Type::list(Type::str_()));
}

// Functions are typed against the program's top-level values, so the dumps run the
// program first, its output discarded, and then show every function.
int run_quietly(CompilationUnit& unit, SourcePtr source) {
  std::ostringstream discard;
  std::streambuf* saved = std::cout.rdbuf(discard.rdbuf());
  int status = run_guarded([&] { unit.run_source(source, false); });
  std::cout.rdbuf(saved);
  return status;
}

// --dump=ir and --dump=opt: every function's graph as written, or optimized and fused
// (what runs).
int dump_ir(CompilationUnit& unit, SourcePtr source, GraphView view) {
  if (int status = run_quietly(unit, source); status != kExitOk) return status;
  return run_guarded([&] {
    for (const auto& [name, decl] : unit.functions()) {
      if (!decl->scope.empty()) continue;  // an imported module's (Note [Modules])
      std::cout << unit.graph_text(*decl, decl->def->name_range, view) << "\n";
    }
    // Transforms (`grad(f)`) that ran run graphs of their own (--dump=grad shows
    // the gradients as written).
    if (view == GraphView::AsWritten) return;
    for (const auto& decl : unit.transforms()) {
      if (!decl->compiled.empty()) std::cout << unit.graph_text(*decl, {}, view) << "\n";
    }
  });
}

// The gradient graph of every function for its Tensor parameters (functions
// without one, or whose result is not a Tensor, are listed as such).
int dump_grad(CompilationUnit& unit, SourcePtr source, bool dot, GraphView view) {
  if (int status = run_quietly(unit, source); status != kExitOk) return status;
  return run_guarded([&] {
    for (const auto& [name, decl] : unit.functions()) {
      if (!decl->scope.empty()) continue;  // an imported module's (Note [Modules])
      const FunctionDecl::Compiled& c = unit.compile_function(*decl, decl->def->name_range);
      bool has_tensor_param = false;
      for (const TypePtr& t : decl->param_types) has_tensor_param |= t->is_tensor();
      if (!c.return_type->is_tensor() || !has_tensor_param) {
        std::cout << "# " << name << ": no gradient graph (it needs a Tensor parameter and a "
                  << "Tensor result)\n\n";
        continue;
      }
      std::cout << unit.gradient_text(*decl, {}, decl->def->name_range, dot, view) << "\n";
    }
  });
}

// --dump=code: every function's Code, then its gradient's two-stage Code.
int dump_code(CompilationUnit& unit, SourcePtr source) {
  if (int status = run_quietly(unit, source); status != kExitOk) return status;
  return run_guarded([&] {
    for (const auto& [name, decl] : unit.functions()) {
      if (!decl->scope.empty()) continue;  // an imported module's (Note [Modules])
      std::cout << code_text(unit, *decl, decl->def->name_range, CodeView::Both) << "\n";
    }
  });
}

// --dump=memplan: every function's memory plan, from the run of FILE.
int dump_memplan(CompilationUnit& unit, SourcePtr source) {
  if (int status = run_quietly(unit, source); status != kExitOk) return status;
  return run_guarded([&] {
    for (const auto& [name, decl] : unit.functions()) {
      if (!decl->scope.empty()) continue;  // an imported module's (Note [Modules])
      std::cout << memplan_text(unit, *decl, decl->def->name_range) << "\n";
    }
    // Transforms (`grad(f)`) that ran have Codes of their own.
    for (const auto& decl : unit.transforms()) {
      if (!decl->compiled.empty()) std::cout << memplan_text(unit, *decl, {}) << "\n";
    }
  });
}

// --dump=kernels: the C++ of every compiled fusion kernel the run of FILE used, from
// the line after the helpers they share (Note [Compiled fusion kernels]).
int dump_kernels(CompilationUnit& unit, SourcePtr source) {
  native_jit_options().mode = NativeJitOptions::Mode::Sync;
  if (int status = run_quietly(unit, source); status != kExitOk) return status;
  std::vector<NativeModuleInfo> modules = native_modules();
  if (modules.empty()) {
    std::cout << "# no compiled fusion kernels: no FusionGroup ran on "
              << native_jit_options().min_elements << " elements or more\n";
  }
  for (const NativeModuleInfo& m : modules) {
    std::cout << "# " << m.source_path << (m.ready ? "" : " (failed: " + m.error + ")") << "\n";
    size_t at = m.source.find(fusion::kCompiledKernelMarker);
    std::string_view body(m.source);
    if (at != std::string::npos) body = body.substr(body.find('\n', at) + 1);
    std::cout << body << "\n";
  }
  return kExitOk;
}

// `tsl --ir FILE.ir --passes=a,b`: parses every graph of the file, runs the passes on
// each (verifying after each pass) and prints them as --dump=ir does.
int run_ir_file(const Options& o) {
  std::string text;
  if (!read_file(o.ir_file, text)) return kExitCompileError;
  try {
    check_pass_names(o.passes);
  } catch (const Error& e) {
    std::cerr << "tsl: error: " << e.what() << "\n";
    return kExitCompileError;
  }
  return run_guarded([&] {
    std::vector<SourceRange> headers;
    std::vector<std::unique_ptr<Graph>> graphs = parse_graphs(text, o.ir_file, &headers);
    if (graphs.empty()) {
      compile_error({std::make_shared<Source>(o.ir_file, text), 1, 0, 1, 1},
                    "no graph in the file (expected 'graph NAME(...):')");
    }
    for (size_t i = 0; i < graphs.size(); ++i) {
      for (const std::string& pass : o.passes) {
        // A pass's user error about the graph as a whole (vmap's "must only return
        // Tensors", inline's missing callee) has no place in the IR text: report it at
        // the graph's header, naming the pass. Located errors keep their place.
        try {
          run_passes(*graphs[i], {pass}, /*verify_after_each=*/true);
        } catch (const Error& e) {
          const auto* located = dynamic_cast<const SourceError*>(&e);
          if (located && located->range().source) throw;
          compile_error(
              headers[i],
              str("pass '", pass, "': ", located ? located->message() : std::string(e.what())));
        }
      }
      std::cout << print_graph(*graphs[i], {.with_lines = true}) << "\n";
    }
  });
}

// Splits "a,b,c" (--passes=) into names; empty names are dropped.
std::vector<std::string> split_pass_list(const std::string& list) {
  std::vector<std::string> names;
  std::stringstream ss(list);
  for (std::string name; std::getline(ss, name, ',');) {
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

int run(const Options& o) {
  if (!o.ir_file.empty()) return run_ir_file(o);
  std::string text;
  std::string name;
  if (o.has_code) {
    text = o.code;
    name = "<string>";
  } else if (!o.file.empty()) {
    if (!read_file(o.file, text)) return kExitCompileError;
    name = o.file;
  } else if (!isatty(STDIN_FILENO)) {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
    name = "<stdin>";
  } else {
    CompilationUnit unit;
    set_argv(unit, o);
    install_sigint_handler();
    return run_repl(unit, std::cin, std::cout, std::cerr);
  }
  auto source = std::make_shared<Source>(name, text);
  CompilationUnit unit;
  set_argv(unit, o);
  if (o.dump == "ast") {
    return run_guarded([&] { std::cout << dump_ast(parse_module(source)); });
  }
  if (o.dump == "ir") return dump_ir(unit, source, GraphView::AsWritten);
  if (o.dump == "opt") return dump_ir(unit, source, GraphView::Optimized);
  if (o.dump == "grad" && !o.grad_call.empty()) {
    // The gradient of one call, specialized (Note [The specialized gradient view]).
    if (int status = run_quietly(unit, source); status != kExitOk) return status;
    GradientViewOptions options;
    options.values = o.values;
    options.picture = o.format == "dot";  // Note [The gradient picture]
    return run_guarded(
        [&] { std::cout << specialized_gradient_of_call(unit, o.grad_call, options); });
  }
  if (o.dump == "grad") return dump_grad(unit, source, o.format == "dot", GraphView::AsWritten);
  if (o.dump == "opt-grad") return dump_grad(unit, source, o.format == "dot", GraphView::Optimized);
  if (o.dump == "code") return dump_code(unit, source);
  if (o.dump == "memplan") return dump_memplan(unit, source);
  if (o.dump == "kernels") return dump_kernels(unit, source);
  install_sigint_handler();
  if (!o.profile) return run_guarded([&] { unit.run_source(source, false); });
  Profiler profiler;
  profiler.start();
  int status = run_guarded([&] { unit.run_source(source, false); });
  profiler.stop();
  std::cout.flush();
  std::cerr << profiler.report();
  return status;
}

}  // namespace

int run_command_line(const std::vector<std::string>& args) {
  Options o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!o.file.empty() || o.has_code) {
      o.script_args.push_back(a);
      continue;
    }
    if (a == "--help" || a == "-h") {
      std::cout << usage();
      return kExitOk;
    }
    if (a == "--version") {
      // What a bug report needs to say: the build's instruction set and the CPU's.
#ifdef __clang__
      constexpr const char* kCompilerName = "clang";
#else
      constexpr const char* kCompilerName = "GCC";
#endif
      const CpuInfo& cpu = cpu_info();
      std::cout << "tsl " << TSL_VERSION << "\nbuild: " << build_instruction_set() << ", built by "
                << kCompilerName << " " << __VERSION__
                << "\nkernels: " << cpu::active_capability_description() << "\ncpu: " << cpu.brand
                << ", " << cpu.level << "\n";
      return kExitOk;
    }
    if (a == "-c") {
      if (i + 1 >= args.size()) {
        std::cerr << "tsl: error: -c needs an argument\n" << usage();
        return kExitCompileError;
      }
      o.code = args[++i];
      o.has_code = true;
    } else if (a.starts_with("--format=")) {
      o.format = a.substr(9);
      if (o.format != "text" && o.format != "dot") {
        std::cerr << "tsl: error: --format takes text or dot\n";
        return kExitCompileError;
      }
    } else if (a.starts_with("--dump=")) {
      o.dump = a.substr(7);
      if (o.dump != "ast" && o.dump != "ir" && o.dump != "opt" && o.dump != "grad" &&
          o.dump != "opt-grad" && o.dump != "code" && o.dump != "memplan" && o.dump != "kernels") {
        std::cerr << "tsl: error: --dump takes ast, ir, opt, grad, opt-grad, code, memplan or "
                     "kernels\n";
        return kExitCompileError;
      }
    } else if (a == "--args" || a.starts_with("--args=")) {
      if (a == "--args" && i + 1 >= args.size()) {
        std::cerr << "tsl: error: --args needs a call, as in --args 'loss(x, w)'\n";
        return kExitCompileError;
      }
      o.grad_call = a == "--args" ? args[++i] : a.substr(7);
    } else if (a == "--timeout" || a.starts_with("--timeout=")) {
      std::string v = a == "--timeout" ? (i + 1 < args.size() ? args[++i] : "") : a.substr(10);
      char* end = nullptr;
      double seconds = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(seconds > 0) || seconds > 1e6) {
        std::cerr << "tsl: error: --timeout needs a number of seconds > 0, as in --timeout 5\n";
        return kExitCompileError;
      }
      set_statement_timeout(seconds);
    } else if (a == "--values") {
      o.values = true;
    } else if (a == "--profile") {
      o.profile = true;
    } else if (a == "--no-opt") {
      set_optimization_enabled(false);
    } else if (a == "--no-memplan") {
      set_memory_planning_enabled(false);
    } else if (a == "--ir") {
      if (i + 1 >= args.size()) {
        std::cerr << "tsl: error: --ir needs a FILE.ir\n";
        return kExitCompileError;
      }
      o.ir_file = args[++i];
    } else if (a.starts_with("--passes=")) {
      o.passes = split_pass_list(a.substr(9));
      o.has_passes = true;
    } else if (a == "--threads" && i + 1 < args.size()) {
      int n = std::atoi(args[++i].c_str());
      if (n < 1) {
        std::cerr << "tsl: error: --threads needs a positive number\n";
        return kExitCompileError;
      }
      set_num_threads(n);
    } else if (a == "--device" && i + 1 < args.size()) {
      std::string d = args[++i];
      std::optional<Device> device = Device::parse(d);
      if (!device) {
        std::cerr << "tsl: error: --device takes cpu, cuda or cuda:N, not '" << d << "'\n";
        return kExitCompileError;
      }
      if (!device->is_cpu()) {
        ensure_kernels_registered();
        DeviceBackend* cuda = cuda_backend();
        if (cuda == nullptr) {
          std::cerr << "tsl: error: --device " << d << ": this build of TSL has no CUDA backend\n";
          return kExitCompileError;
        }
        if (cuda->device_count() == 0) {
          std::cerr << "tsl: error: --device " << d
                    << ": CUDA is not available: " << cuda->unavailable_reason() << "\n";
          return kExitCompileError;
        }
        if (device->index >= cuda->device_count()) {
          std::cerr << "tsl: error: --device " << d << ": this machine has " << cuda->device_count()
                    << " GPU(s)\n";
          return kExitCompileError;
        }
      }
      set_default_device(*device);
    } else if (a.starts_with("-") && a != "-") {
      std::cerr << "tsl: error: unknown option " << a << "\n" << usage();
      return kExitCompileError;
    } else {
      o.file = a;
    }
  }
  if (!o.dump.empty() && o.file.empty() && !o.has_code) {
    std::cerr << "tsl: error: --dump needs a FILE\n";
    return kExitCompileError;
  }
  if ((!o.grad_call.empty() || o.values) && o.dump != "grad") {
    std::cerr << "tsl: error: --args and --values go with --dump=grad\n";
    return kExitCompileError;
  }
  if (o.values && o.grad_call.empty()) {
    std::cerr << "tsl: error: --values needs --args 'F(ARGS)'\n";
    return kExitCompileError;
  }
  if (o.has_passes && o.ir_file.empty()) {
    std::cerr << "tsl: error: --passes needs --ir FILE.ir\n";
    return kExitCompileError;
  }
  if (!o.ir_file.empty() && (!o.file.empty() || o.has_code || !o.dump.empty())) {
    std::cerr << "tsl: error: --ir takes no program (FILE.tsl, -c or --dump)\n";
    return kExitCompileError;
  }
  return run_with_big_stack([&] { return run(o); });
}

}  // namespace tsl
