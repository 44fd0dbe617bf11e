// Compiling generated C++ at run time: one background thread runs the C++ compiler
// (the one TSL was built with, with TSL's code-generation flags) on each source, and
// the shared objects stay on disk, named by a hash of everything that shapes them, so
// that later sessions load them at once. See Note [Compiled fusion kernels].
#include "runtime/fusion/native_compiler.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <Eigen/Core>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime/tensor/cpu_capability.h"
#include "runtime/tensor/cpu_info.h"
#include "runtime/tensor/interrupt.h"

extern char** environ;

namespace tsl {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

NativeJitOptions options_from_environment() {
  NativeJitOptions o;
  std::string mode = env_or("TSL_FUSION_JIT", "async");
  if (mode == "off" || mode == "0") {
    o.mode = NativeJitOptions::Mode::Off;
  } else if (mode == "sync") {
    o.mode = NativeJitOptions::Mode::Sync;
  } else if (mode != "async") {
    std::fprintf(stderr,
                 "tsl: warning: TSL_FUSION_JIT is '%s'; expected off, async or sync "
                 "(using async)\n",
                 mode.c_str());
  }
  if (const char* hot = std::getenv("TSL_FUSION_JIT_HOT"); hot && *hot) {
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(hot, &end, 10);
    if (end && *end == '\0' && v >= 0 && errno == 0) {
      o.hot_elements = v;
    } else {
      std::fprintf(stderr,
                   "tsl: warning: TSL_FUSION_JIT_HOT is '%s'; expected a number of "
                   "elements (using %lld)\n",
                   hot, static_cast<long long>(o.hot_elements));
    }
  }
  std::string base = env_or("XDG_CACHE_HOME", "");
  if (base.empty()) {
    std::string home = env_or("HOME", "");
    base = home.empty() ? std::string() : home + "/.cache";
  }
  o.cache_dir = env_or("TSL_CACHE_DIR", base.empty() ? std::string() : base + "/tsl");
  o.compiler = env_or("TSL_CXX", TSL_JIT_CXX);
  return o;
}

// The flags of generated code: TSL's own (CMake's TSL_JIT_FLAGS: the build type's
// optimization, sanitizers) and the running CPU capability's instruction set, written
// out (Note [One binary for every x86-64]), as they decide what the code computes:
// Eigen's packet size, and where GCC contracts a * b + c into an FMA inside Eigen's
// functions. So compiled kernels and the capability's chunk loop and unfused kernels
// agree bit for bit.
std::vector<std::string> compile_flags() {
  std::vector<std::string> f = {"-std=c++20",          "-fPIC", "-shared",
                                "-fvisibility=hidden", "-w",    "-isystem",
                                TSL_JIT_EIGEN_INCLUDE};
  std::istringstream build_flags(TSL_JIT_FLAGS);
  for (std::string flag; build_flags >> flag;) f.push_back(flag);
  std::istringstream arch_flags(cpu::active_capability().jit_flags);
  for (std::string flag; arch_flags >> flag;) f.push_back(flag);
  return f;
}

// The first line `compiler --version` prints ("g++ (Debian 12.2.0-14) 12.2.0"), or
// "unknown" when it does not run: a kernel cached by one version of the compiler is
// not loaded by a TSL that would compile it with another. Asked once per compiler.
std::string compiler_version(const std::string& compiler) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::string> known;
  std::lock_guard<std::mutex> lock(mu);
  auto it = known.find(compiler);
  if (it != known.end()) return it->second;
  std::string version = "unknown";
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) == 0) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setsigmask(&attr, &none);
    std::string arg0 = compiler, arg1 = "--version";
    char* argv[] = {arg0.data(), arg1.data(), nullptr};
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    std::string out;
    char buf[256];
    for (ssize_t n; rc == 0 && (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    if (rc == 0) {
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !out.empty())
        version = out.substr(0, out.find('\n'));
    }
  }
  known.emplace(compiler, version);
  return version;
}

}  // namespace

// Note [What a compiled kernel depends on]
// A cached kernel is loaded only by a TSL that would have compiled the same object code
// and on a CPU that can run it, so its name hashes: TSL's version and the Eigen and
// compiler TSL was built with (the interpreter's side of the bit-for-bit agreement);
// the run-time compiler's path and version and its flags, which name the instruction
// set TSL's own kernels were built for (-march=native written out, CMakeLists.txt);
// and the running CPU's extensions (runtime/tensor/cpu_info.h). A cache folder shared
// by two machines, or kept across a compiler upgrade, then holds a kernel per CPU and
// compiler, and never hands one machine another's.
std::string native_build_identity(const NativeJitOptions& o, const CpuInfo& cpu) {
  std::string id = "tsl " TSL_VERSION "; eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
                   std::to_string(EIGEN_MAJOR_VERSION) + "." + std::to_string(EIGEN_MINOR_VERSION) +
                   "; built by " __VERSION__ "; " + o.compiler + " (" +
                   compiler_version(o.compiler) + ")";
  for (const std::string& f : compile_flags()) id += " " + f;
  id += "; libs " TSL_JIT_LIBS "; cpu " + cpu.summary();
  return id;
}

const char* build_instruction_set() { return TSL_BUILD_MARCH; }

std::string cache_key(const std::string& text) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a, 64 bits
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

class NativeCompiler {
 public:
  static NativeCompiler& get() {
    static NativeCompiler c;
    return c;
  }

  std::shared_ptr<NativeModule> request(std::string source, std::string symbol, bool wait) {
    const NativeJitOptions& o = native_jit_options();
    std::string key =
        cache_key(native_build_identity(o, cpu_info()) + "\n" + symbol + "\n" + source);
    std::unique_lock<std::mutex> lock(mu_);
    std::shared_ptr<NativeModule>& m = modules_[key];
    if (!m) {
      m = std::make_shared<NativeModule>();
      order_.push_back(m);
      m->source = std::move(source);
      m->symbol_name = std::move(symbol);
      if (o.cache_dir.empty()) {
        fail(*m, "no cache folder: set TSL_CACHE_DIR or HOME");
      } else {
        std::string base = o.cache_dir + "/kernels/" + key;
        m->source_path_ = base + ".cpp";
        // A compiled object from an earlier session loads at once; one that does not
        // load (a damaged file) is compiled again.
        if (::access((base + ".so").c_str(), R_OK) == 0 && load(*m, base + ".so").empty()) {
          ++counters_.cache_hits;
        } else {
          queue_.emplace_back(m, base);
          start_worker();
          wake_.notify_all();
        }
      }
    }
    std::shared_ptr<NativeModule> result = m;
    if (wait) done_.wait(lock, [&] { return result->state() != NativeModule::State::Pending; });
    return result;
  }

  NativeCounters counters() {
    std::lock_guard<std::mutex> lock(mu_);
    return counters_;
  }

  std::vector<NativeModuleInfo> modules() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<NativeModuleInfo> out;
    for (const auto& m : order_) {
      bool failed = m->state() == NativeModule::State::Failed;
      out.push_back({m->source_path_, m->source, failed ? m->error_ : std::string(),
                     m->state() == NativeModule::State::Ready});
    }
    return out;
  }

  ~NativeCompiler() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      // A compilation still running at exit is abandoned; its files are temporary.
      if (child_ > 0) ::kill(-child_, SIGKILL);
    }
    wake_.notify_all();
    if (worker_.joinable()) worker_.join();
  }

 private:
  NativeCompiler() = default;

  void start_worker() {
    if (!worker_.joinable()) {
      worker_ = std::thread([this] {
        // A Ctrl-C this thread took would not interrupt the REPL's read: it hung at
        // a `...` prompt once a fused kernel had been compiled (Repl.Soak10000Statements).
        block_sigint_in_this_thread();
        work();
      });
    }
  }

  void work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      auto [m, base] = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      std::string error = compile(*m, base);
      lock.lock();
      if (stop_) return;
      if (error.empty()) error = load(*m, base + ".so");
      if (error.empty()) {
        ++counters_.compiled;
      } else {
        fail(*m, error);
      }
      done_.notify_all();
    }
  }

  // Writes the source and runs the compiler; an error message, or empty.
  std::string compile(NativeModule& m, const std::string& base) {
    const NativeJitOptions& o = native_jit_options();
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(base).parent_path(), ec);
    if (ec) return "cannot create " + std::filesystem::path(base).parent_path().string();
    // Temporary names, then renames: sessions running side by side never read half a file.
    std::string tag = "." + std::to_string(::getpid()) + ".tmp";
    {
      std::ofstream out(base + ".cpp" + tag);
      out << m.source;
      if (!out) return "cannot write " + base + ".cpp";
    }
    std::filesystem::rename(base + ".cpp" + tag, base + ".cpp", ec);
    std::vector<std::string> args = {o.compiler};
    for (const std::string& f : compile_flags()) args.push_back(f);
    args.insert(args.end(), {"-o", base + ".so" + tag, base + ".cpp"});
    // The libraries the formulas call (SLEEF: Note [Vector math]), after the source.
    std::istringstream libs(TSL_JIT_LIBS);
    for (std::string lib; libs >> lib;) args.push_back(lib);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    std::string log = base + ".log";
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    // Its own process group, so that a kill at exit reaches cc1plus and as as well.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // With no signal blocked: the spawning thread blocks SIGINT (block_sigint_in_this_thread).
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setsigmask(&attr, &none);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return "cannot run " + o.compiler + ": " + std::strerror(rc);
    // Below the program's own threads: in the async mode it runs beside them.
    ::setpriority(PRIO_PGRP, static_cast<id_t>(pid), 10);
    {
      std::lock_guard<std::mutex> lock(mu_);
      child_ = pid;
      if (stop_) ::kill(-pid, SIGKILL);  // the process is exiting
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      child_ = -1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::filesystem::remove(base + ".so" + tag, ec);
      return o.compiler + " failed on " + base + ".cpp (see " + log + ")";
    }
    std::filesystem::rename(base + ".so" + tag, base + ".so", ec);
    if (ec) return "cannot rename " + base + ".so" + tag;
    return "";
  }

  // Loads a compiled object into `m`; an error message, or empty.
  std::string load(NativeModule& m, const std::string& path) {
    // RTLD_LOCAL: every module defines the same symbol name.
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = ::dlerror();
      return std::string("cannot load ") + path + ": " + (e ? e : "?");
    }
    void* sym = ::dlsym(h, m.symbol_name.c_str());
    if (!sym) {
      ::dlclose(h);
      return path + " has no symbol " + m.symbol_name;
    }
    // Never closed: compiled kernels may run until the process ends.
    m.handle_ = h;
    m.symbol_.store(sym, std::memory_order_relaxed);
    m.state_.store(NativeModule::State::Ready, std::memory_order_release);
    return "";
  }

  void fail(NativeModule& m, std::string error) {
    m.error_ = std::move(error);
    m.state_.store(NativeModule::State::Failed, std::memory_order_release);
    ++counters_.failed;
  }

  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::unordered_map<std::string, std::shared_ptr<NativeModule>> modules_;
  std::vector<std::shared_ptr<NativeModule>> order_;  // as asked for
  std::deque<std::pair<std::shared_ptr<NativeModule>, std::string>> queue_;
  std::thread worker_;
  pid_t child_ = -1;
  bool stop_ = false;
  NativeCounters counters_;
};

NativeJitOptions& native_jit_options() {
  static NativeJitOptions o = options_from_environment();
  return o;
}

std::shared_ptr<NativeModule> compile_native(std::string source, std::string symbol, bool wait) {
  return NativeCompiler::get().request(std::move(source), std::move(symbol), wait);
}

NativeCounters native_counters() { return NativeCompiler::get().counters(); }

std::vector<NativeModuleInfo> native_modules() { return NativeCompiler::get().modules(); }

}  // namespace tsl
