// FusionGroups on a GPU: the group's fused program as one CUDA kernel, generated here,
// compiled by the device backend (NVRTC) and cached on disk. See Note [Fused kernels
// on CUDA].
#include "runtime/fusion/device_kernels.h"

#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>
#include <sstream>

#include "runtime/fusion/native_compiler.h"
#include "runtime/fusion/plan.h"
#include "runtime/tensor/device_backend.h"

namespace tsl::fusion {

// Note [Fused kernels on CUDA]
// Run op by op on a GPU, a FusionGroup's chain (`tanh(x * 2 + 1) * x`, a gradient's
// dozen steps) reads and writes every intermediate tensor in device memory, one
// launch per op. Fused, it is one kernel that reads each input once and writes each
// output once, with every intermediate in a register: the chain is bound by memory
// bandwidth as a copy is.
//
// The kernel is generated from the same fused program the CPU's chunk loop runs
// (program.h) and planned by the same rules (plan.h: the run's dtype,
// bool values, which steps may run fused), with one difference: the unfused CUDA
// kernels compute every element by the same formula wherever it is, so the SIMD ops
// may read broadcast or strided values too (positions_matter is false). Each step is
// the unfused kernel's formula: a call of the function its row of runtime/fused_ops.def
// names (Note [Fused ops]), in runtime/kernels/cuda/formulas.cuh, whose text the
// generated source embeds; the transcendental and activation ones are the unfused
// kernels' own, and arithmetic goes through __fadd_rn and its kin, which never contract
// into an FMA with a neighbouring step (the unfused kernels round every step's result
// to memory). So fused and unfused results are the same bits. Runs with an add or sub
// whose alpha is not 1 take the fallback, as the CPU's compiled kernels do: whether
// `x + alpha * y` contracts is the compiler's choice.
//
// A kernel is specific to a DeviceVariantKey (the dtype, how each input is read, which
// values are bool, the rank of a strided walk). It walks the result's elements in
// order, four at a time with vector loads when every input it reads in place is
// aligned, and through each input's strides when one is broadcast or strided (a bias
// against a batch). The first run of a variant goes op by op (a statement run once
// never waits for a compiler); the second compiles it, on the running thread (NVRTC
// takes 100-200 ms per kernel, once per machine; see variant_kernel for why not in the
// background), and keeps the image in the cache folder (TSL_CACHE_DIR/cuda), named by
// a hash of the source and of NVRTC's release and target, so later sessions only load
// it. TSL_FUSION_JIT=sync compiles at the first run (benchmarks, which time later
// runs), =off never. Where NVRTC is missing or fails, the group runs op by op, with
// one warning.

namespace {

std::atomic<int64_t> g_device_runs{0};

constexpr int kLanes = 4;  // elements per vector load of the flat walk
// A strided walk over more dims takes the fallback.
constexpr int kMaxStridedDims = 8;

// ---- The kernel's parameter: 8-byte slots ---------------------------------------------
//
// [0] the number of elements; [1] 1 when the flat walk may load four lanes at once;
// [2, 2 + ndim) the result's sizes (strided walk); then per input: Dense and Splat its
// pointer, Strided its pointer and ndim strides, Scalar the bits of its T value,
// Unused nothing; then per step: LeakyRelu its slope, Clamp its bounds (-inf and +inf
// where absent); then per tensor output its pointer.
struct SlotLayout {
  std::vector<int> input, arg, output;  // the first slot of each (-1: none)
  int total = 0;
};

SlotLayout slot_layout(const FusedGroup& g, const DeviceVariantKey& key) {
  SlotLayout l;
  int next = 2 + key.ndim;
  for (DeviceInput mode : key.inputs) {
    l.input.push_back(mode == DeviceInput::Unused ? -1 : next);
    next += mode == DeviceInput::Unused ? 0 : mode == DeviceInput::Strided ? 1 + key.ndim : 1;
  }
  for (const Step& s : g.steps) {
    int values = formula_values(fused_info(s.op).args);
    l.arg.push_back(values > 0 ? next : -1);
    next += values;
  }
  for (size_t k = 0; k < g.return_regs.size(); ++k) {
    l.output.push_back(g.is_dtype_output(k) ? -1 : next);
    next += g.is_dtype_output(k) ? 0 : 1;
  }
  l.total = next;
  return l;
}

// ---- The generated source ----------------------------------------------------------------

// After formulas.cuh: the run's type, the parameter, and literals.
constexpr const char* kPrelude = R"CODE(
struct Args {
  unsigned long long s[TSL_SLOTS];
};

template <typename E>
struct alignas(4 * sizeof(E)) Pk {
  E v[4];
};

// Literals of T (formulas.cuh has the formulas of the steps).
#if TSL_DOUBLE
__device__ __forceinline__ T tsl_from_bits(unsigned long long s) {
  return __longlong_as_double(static_cast<long long>(s));
}
__device__ __forceinline__ T tsl_inf() { return __longlong_as_double(0x7ff0000000000000LL); }
__device__ __forceinline__ T tsl_nan() { return __longlong_as_double(0x7ff8000000000000LL); }
#else
__device__ __forceinline__ T tsl_from_bits(unsigned long long s) {
  return __int_as_float(static_cast<int>(static_cast<unsigned>(s)));
}
__device__ __forceinline__ T tsl_inf() { return __int_as_float(0x7f800000); }
__device__ __forceinline__ T tsl_nan() { return __int_as_float(0x7fc00000); }
#endif
)CODE";

// A double as an exact literal of type T.
std::string literal(double v) {
  if (v != v) return "tsl_nan()";
  if (v == std::numeric_limits<double>::infinity()) return "tsl_inf()";
  if (v == -std::numeric_limits<double>::infinity()) return "(-tsl_inf())";
  char buf[64];
  std::snprintf(buf, sizeof buf, "T(%a)", v);
  return buf;
}

class DeviceGenerator {
 public:
  DeviceGenerator(const FusedGroup& g, const DeviceVariantKey& key)
      : g_(g), key_(key), layout_(slot_layout(g, key)) {}

  std::string source() {
    std::ostringstream o;
    bool is_double = key_.dtype == DType::Float64;
    o << "// A FusionGroup's program on CUDA, generated by TSL "
         "(runtime/fusion/device_kernels.cpp).\n"
      << kCudaFormulasText << "\ntypedef " << (is_double ? "double" : "float") << " T;\n"
      << "#define TSL_DOUBLE " << (is_double ? 1 : 0) << "\n#define TSL_SLOTS " << layout_.total
      << "\n"
      << kPrelude << "\n";
    program(o);
    kernel(o);
    return o.str();
  }

 private:
  bool per_element(size_t k) const {
    DeviceInput m = key_.inputs[k];
    return m == DeviceInput::Dense || m == DeviceInput::Strided;
  }
  bool in_bool(size_t k) const { return key_.input_bool >> k & 1; }
  bool out_bool(size_t k) const { return key_.out_bool >> k & 1; }
  bool is_output(size_t k) const { return !g_.is_dtype_output(k); }
  std::string in_type(size_t k) const { return in_bool(k) ? "bool" : "T"; }
  std::string out_type(size_t k) const { return out_bool(k) ? "bool" : "T"; }

  std::string operand(const Operand& x) const {
    switch (x.kind) {
      case Operand::Kind::Input:
        return "x" + std::to_string(x.index);
      case Operand::Kind::Reg:
        return "r" + std::to_string(x.index);
      case Operand::Kind::Imm:
        return literal(x.imm);
      default:
        return "T(0)";
    }
  }

  // The program as a lambda over the values read per element: `x<k>` for those, the
  // others (scalars, splats, step arguments) captured; `y<k>` the outputs' values.
  void program(std::ostream& o) const {
    o << "#define TSL_PROGRAM_PARAMS";
    bool first = true;
    for (size_t k = 0; k < key_.inputs.size(); ++k) {
      if (!per_element(k)) continue;
      o << (first ? " " : ", ") << "T x" << k;
      first = false;
    }
    for (size_t k = 0; k < g_.return_regs.size(); ++k) {
      if (!is_output(k)) continue;
      o << (first ? " " : ", ") << "T& y" << k;
      first = false;
    }
    o << "\n#define TSL_PROGRAM_BODY";
    if (g_.num_registers > 0) {
      o << " T";
      for (uint32_t r = 0; r < g_.num_registers; ++r) o << (r ? ", r" : " r") << r;
      o << ";";
    }
    for (size_t i = 0; i < g_.steps.size(); ++i) o << " \\\n  " << step(i);
    for (size_t k = 0; k < g_.return_regs.size(); ++k) {
      if (is_output(k)) o << " \\\n  y" << k << " = r" << g_.return_regs[k] << ";";
    }
    o << "\n";
  }

  // Step i: its row's formula (formulas.cuh) on its operands, then its values
  // (formula_values: the slope; clamp's bounds).
  std::string step(size_t i) const {
    const Step& s = g_.steps[i];
    const FusedOpInfo& f = fused_info(s.op);
    std::string e = std::string("tsl_") + f.formula + "(";
    const Operand* operands[] = {&s.a, &s.b, &s.c};
    for (size_t k = 0; k < f.operands; ++k) e += (k ? ", " : "") + operand(*operands[k]);
    for (int v = 0; v < formula_values(f.args); ++v)
      e += ", p" + std::to_string(i) + "_" + std::to_string(v);
    return "r" + std::to_string(s.dst) + " = " + e + ");";
  }

  std::string slot(int i) const { return "a.s[" + std::to_string(i) + "]"; }

  // Calls the program on the values `read(k)` gives, then `store(k, value)` per output.
  template <typename Read, typename Store>
  void call(std::ostream& o, const std::string& indent, Read read, Store store) const {
    o << indent << "{\n" << indent << "  T";
    bool first = true;
    for (size_t k = 0; k < g_.return_regs.size(); ++k) {
      if (!is_output(k)) continue;
      o << (first ? " y" : ", y") << k;
      first = false;
    }
    if (first) o << " unused_";
    o << ";\n" << indent << "  program(";
    first = true;
    for (size_t k = 0; k < key_.inputs.size(); ++k) {
      if (!per_element(k)) continue;
      o << (first ? "" : ", ") << "T(" << read(k) << ")";
      first = false;
    }
    for (size_t k = 0; k < g_.return_regs.size(); ++k) {
      if (!is_output(k)) continue;
      o << (first ? "" : ", ") << "y" << k;
      first = false;
    }
    o << ");\n";
    for (size_t k = 0; k < g_.return_regs.size(); ++k) {
      if (!is_output(k)) continue;
      std::string v = "y" + std::to_string(k);
      o << indent << "  " << store(k, out_bool(k) ? "(" + v + " != T(0))" : v) << ";\n";
    }
    o << indent << "}\n";
  }

  void kernel(std::ostream& o) const {
    o << "extern \"C\" __global__ void " << kDeviceKernelSymbol << "(const Args a) {\n"
      << "  const long long n = static_cast<long long>(a.s[0]);\n"
      << "  const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;\n"
      << "  const long long tid = static_cast<long long>(blockIdx.x) * blockDim.x + "
         "threadIdx.x;\n";
    for (size_t k = 0; k < key_.inputs.size(); ++k) {
      int at = layout_.input[k];
      std::string ptr = "reinterpret_cast<const " + in_type(k) + "*>(" + slot(at) + ")";
      switch (key_.inputs[k]) {
        case DeviceInput::Dense:
        case DeviceInput::Strided:
          o << "  const " << in_type(k) << "* const in" << k << " = " << ptr << ";\n";
          break;
        case DeviceInput::Splat:
          o << "  const T x" << k << " = T(" << ptr << "[0]);\n";
          break;
        case DeviceInput::Scalar:
          o << "  const T x" << k << " = tsl_from_bits(" << slot(at) << ");\n";
          break;
        case DeviceInput::Unused:
          break;
      }
    }
    for (size_t i = 0; i < g_.steps.size(); ++i) {
      int at = layout_.arg[i];
      for (int v = 0; v < formula_values(fused_info(g_.steps[i].op).args); ++v)
        o << "  const T p" << i << "_" << v << " = tsl_from_bits(" << slot(at + v) << ");\n";
    }
    for (size_t k = 0; k < g_.return_regs.size(); ++k) {
      if (!is_output(k)) continue;
      o << "  " << out_type(k) << "* const out" << k << " = reinterpret_cast<" << out_type(k)
        << "*>(" << slot(layout_.output[k]) << ");\n";
    }
    o << "  auto program = [&](TSL_PROGRAM_PARAMS) { TSL_PROGRAM_BODY };\n";
    auto at_i = [&](size_t k) { return "in" + std::to_string(k) + "[i]"; };
    auto store_i = [&](size_t k, const std::string& v) {
      return "out" + std::to_string(k) + "[i] = " + v;
    };
    if (key_.ndim == 0) {
      o << "  if (" << slot(1) << " != 0) {\n"
        << "    const long long packs = n / 4;\n"
        << "    for (long long v = tid; v < packs; v += 2 * threads) {\n"
        << "      const long long w = v + threads;\n"
        << "      const bool two = w < packs;\n";
      // Both packs' loads before either's stores, so that enough bytes are in flight.
      for (size_t k = 0; k < key_.inputs.size(); ++k) {
        if (key_.inputs[k] != DeviceInput::Dense) continue;
        std::string pk = "Pk<" + in_type(k) + ">",
                    src = "reinterpret_cast<const " + pk + "*>(in" + std::to_string(k) + ")";
        o << "      const " << pk << " l" << k << "_0 = " << src << "[v];\n"
          << "      " << pk << " l" << k << "_1;\n"
          << "      if (two) l" << k << "_1 = " << src << "[w];\n";
      }
      for (size_t k = 0; k < g_.return_regs.size(); ++k) {
        if (is_output(k)) o << "      Pk<" << out_type(k) << "> o" << k << "_0, o" << k << "_1;\n";
      }
      for (int u = 0; u < 2; ++u) {
        std::string us = std::to_string(u);
        o << (u == 0 ? "      {\n" : "      if (two) {\n") << "#pragma unroll\n"
          << "        for (int j = 0; j < " << kLanes << "; ++j)\n";
        call(
            o, "        ", [&](size_t k) { return "l" + std::to_string(k) + "_" + us + ".v[j]"; },
            [&](size_t k, const std::string& v) {
              return "o" + std::to_string(k) + "_" + us + ".v[j] = " + v;
            });
        o << "      }\n";
      }
      for (size_t k = 0; k < g_.return_regs.size(); ++k) {
        if (!is_output(k)) continue;
        std::string dst =
            "reinterpret_cast<Pk<" + out_type(k) + ">*>(out" + std::to_string(k) + ")";
        o << "      " << dst << "[v] = o" << k << "_0;\n"
          << "      if (two) " << dst << "[w] = o" << k << "_1;\n";
      }
      o << "    }\n"
        << "    for (long long i = packs * 4 + tid; i < n; i += threads)\n";
      call(o, "    ", at_i, store_i);
      o << "  } else {\n"
        << "    for (long long i = tid; i < n; i += threads)\n";
      call(o, "    ", at_i, store_i);
      o << "  }\n";
    } else {
      // Each strided input's offset from the element's position in the result.
      o << "  for (long long i = tid; i < n; i += threads) {\n"
        << "    long long rest = i";
      for (size_t k = 0; k < key_.inputs.size(); ++k) {
        if (key_.inputs[k] == DeviceInput::Strided) o << ", at" << k << " = 0";
      }
      o << ";\n";
      for (int d = key_.ndim - 1; d >= 0; --d) {
        o << "    {\n"
          << "      const long long size = static_cast<long long>(" << slot(2 + d) << ");\n"
          << "      const long long index = rest % size;\n"
          << "      rest /= size;\n";
        for (size_t k = 0; k < key_.inputs.size(); ++k) {
          if (key_.inputs[k] != DeviceInput::Strided) continue;
          o << "      at" << k << " += index * static_cast<long long>("
            << slot(layout_.input[k] + 1 + d) << ");\n";
        }
        o << "    }\n";
      }
      call(
          o, "    ",
          [&](size_t k) {
            std::string ks = std::to_string(k);
            return key_.inputs[k] == DeviceInput::Strided ? "in" + ks + "[at" + ks + "]"
                                                          : "in" + ks + "[i]";
          },
          store_i);
      o << "  }\n";
    }
    o << "}\n";
  }

  const FusedGroup& g_;
  const DeviceVariantKey& key_;
  SlotLayout layout_;
};

// ---- Compiled kernels, cached on disk ---------------------------------------------------

void warn_once(const std::string& message) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::fprintf(stderr, "tsl: warning: %s; fused groups run op by op on the GPU\n",
                 message.c_str());
  });
}

// Writes `bytes` to `path` through a temporary file and a rename (sessions side by
// side never read half a file); an error message, or empty.
std::string write_atomically(const std::filesystem::path& path, const std::string& bytes) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) return "cannot create " + path.parent_path().string() + ": " + ec.message();
  std::filesystem::path tmp = path;
  tmp += "." + std::to_string(::getpid()) + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return "cannot write " + path.string();
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return "cannot write " + path.string() + ": " + ec.message();
  }
  return "";
}

// The kernel of `source`: loaded from the cache, else compiled and kept there; null
// when it cannot be had (warned once).
std::shared_ptr<DeviceKernel> obtain_kernel(DeviceBackend& backend, const std::string& source) {
  const std::string& cache_dir = native_jit_options().cache_dir;
  std::string identity = backend.kernel_compiler_identity();
  std::string key = cache_key(identity + "\n" + source);
  std::filesystem::path file;
  std::string error;
  if (!cache_dir.empty()) {
    file = std::filesystem::path(cache_dir) / "cuda" / (key + ".bin");
    std::ifstream in(file, std::ios::binary);
    if (in) {
      std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      // A damaged file is compiled again.
      if (auto k = backend.load_kernel(image, kDeviceKernelSymbol, error)) return k;
    }
  }
  std::string image = backend.compile_kernel(source, kDeviceKernelSymbol, error);
  if (image.empty()) {
    warn_once("cannot compile a fused CUDA kernel (" + error + ")");
    return nullptr;
  }
  if (!file.empty()) {
    std::string failed = write_atomically(file, image);
    if (!failed.empty()) {
      static std::once_flag once;
      std::call_once(once, [&] {
        std::fprintf(stderr, "tsl: warning: the kernel cache: %s\n", failed.c_str());
      });
    }
  }
  auto k = backend.load_kernel(image, kDeviceKernelSymbol, error);
  if (!k) warn_once(error);
  return k;
}

// ---- One run -------------------------------------------------------------------------

struct DeviceRun {
  DeviceVariantKey key;
  SlotLayout layout;
  DimVector shape;
  int64_t n = 1;
  std::vector<uint64_t> slots;
};

template <typename T>
uint64_t bits_of(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof v);
  return b;
}

uint64_t pointer_slot(const void* p) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
}

// Plans the run in T and fills the parameter's slots but the outputs'; false when it
// must take the fallback.
template <typename T>
bool plan_device_run(const FusedGroup& g, const KernelArgs& args, DeviceRun& r) {
  const uint32_t num_inputs = g.num_inputs;
  if (num_inputs > 64 || g.return_regs.size() > 64) return false;
  r.key.inputs.assign(num_inputs, DeviceInput::Unused);
  ValueInfo infos[64];
  Shapes shapes;
  bool strided = false;
  for (uint32_t k = 0; k < num_inputs; ++k) {
    const IValue& v = args.in(k);
    ValueInfo& info = infos[k];
    if (v.is_tensor()) {
      const TensorImpl* t = v.tensor_impl();
      bool is_bool = t->dtype() == DType::Bool;
      info.kind = is_bool ? VKind::Bool : VKind::Float;
      info.full = t->sizes() == r.shape;
      if (!info.full) {
        info.shape = static_cast<int16_t>(shapes.size());
        shapes.push_back(t->sizes());
      }
      info.contiguous = info.full && t->is_contiguous();
      if (is_bool) r.key.input_bool |= uint64_t{1} << k;
      r.key.inputs[k] = info.contiguous ? DeviceInput::Dense
                        : (!info.full && t->numel() == 1) || all_strides_zero(t)
                            ? DeviceInput::Splat
                            : DeviceInput::Strided;
      strided |= r.key.inputs[k] == DeviceInput::Strided;
    } else if (v.is_dtype()) {
      info.kind = VKind::DTypeNum;
      info.dtype = v.to_dtype();
    } else if (!v.is_none()) {
      info.kind = v.is_int() ? VKind::IntNum : v.is_bool() ? VKind::BoolNum : VKind::FloatNum;
      r.key.inputs[k] = DeviceInput::Scalar;
    }
  }
  if (!plan_kinds(g, r.key.dtype, r.shape, infos, shapes, r.key.out_bool,
                  /*positions_matter=*/false))
    return false;
  // Inputs no step reads (numbers read only at planning, dtypes) are not passed.
  std::vector<bool> read(num_inputs, false);
  for (const Step& s : g.steps) {
    for (const Operand* o : {&s.a, &s.b, &s.c}) {
      if (o->kind == Operand::Kind::Input) read[o->index] = true;
    }
  }
  strided = false;
  for (uint32_t k = 0; k < num_inputs; ++k) {
    if (!read[k]) r.key.inputs[k] = DeviceInput::Unused;
    strided |= r.key.inputs[k] == DeviceInput::Strided;
  }
  if (strided) {
    if (r.shape.size() > static_cast<size_t>(kMaxStridedDims)) return false;
    r.key.ndim = static_cast<int>(r.shape.size());
  }
  r.layout = slot_layout(g, r.key);
  const SlotLayout& layout = r.layout;
  r.slots.assign(static_cast<size_t>(layout.total), 0);
  r.slots[0] = static_cast<uint64_t>(r.n);
  for (int d = 0; d < r.key.ndim; ++d) r.slots[2 + d] = static_cast<uint64_t>(r.shape[d]);
  bool aligned = true;
  for (uint32_t k = 0; k < num_inputs; ++k) {
    int at = layout.input[k];
    if (at < 0) continue;
    const IValue& v = args.in(k);
    switch (r.key.inputs[k]) {
      case DeviceInput::Dense: {
        const TensorImpl* t = v.tensor_impl();
        size_t pack = kLanes * (t->dtype() == DType::Bool ? 1 : sizeof(T));
        aligned &= reinterpret_cast<uintptr_t>(t->data()) % pack == 0;
        r.slots[at] = pointer_slot(t->data());
        break;
      }
      case DeviceInput::Splat:
        r.slots[at] = pointer_slot(v.tensor_impl()->data());
        break;
      case DeviceInput::Strided: {
        const TensorImpl* t = v.tensor_impl();
        r.slots[at] = pointer_slot(t->data());
        size_t lead = r.shape.size() - t->sizes().size();
        for (size_t d = 0; d < t->sizes().size(); ++d) {
          int64_t stride = t->sizes()[d] == 1 ? 0 : t->strides()[d];
          r.slots[at + 1 + lead + d] = static_cast<uint64_t>(stride);
        }
        break;
      }
      case DeviceInput::Scalar:
        r.slots[at] =
            bits_of(v.is_int() ? static_cast<T>(v.to_int()) : static_cast<T>(v.to_double()));
        break;
      case DeviceInput::Unused:
        break;
    }
  }
  r.slots[1] = aligned ? 1 : 0;
  for (size_t i = 0; i < g.steps.size(); ++i) {
    const Step& s = g.steps[i];
    const FusedArgs kind = fused_info(s.op).args;
    T v[2] = {T(0), T(0)};
    if (!step_values<T>(s, args, v[0], v[1])) return false;
    // See Note [Fused kernels on CUDA]: alpha other than 1 keeps the unfused kernels.
    if (kind == FusedArgs::Alpha && v[0] != T(1)) return false;
    for (int k = 0; k < formula_values(kind); ++k) r.slots[layout.arg[i] + k] = bits_of(v[k]);
  }
  return true;
}

// The variant's kernel, or null while it has none (see Note [Fused kernels on CUDA]).
// Compiled on the running thread: a compile in the background would still be inside
// NVRTC when a short program exits, and NVRTC's own static objects are destroyed at
// exit before any join of ours could run (the crash was seen on an H200).
std::shared_ptr<DeviceKernel> variant_kernel(const FusedGroup& g, const DeviceVariantKey& key,
                                             DeviceBackend& backend) {
  const NativeJitOptions& opt = native_jit_options();
  std::lock_guard<std::mutex> lock(g.compiled_mu);
  auto it = std::find_if(g.device_compiled.begin(), g.device_compiled.end(),
                         [&](const DeviceVariant& v) { return v.key == key; });
  if (it == g.device_compiled.end()) {
    DeviceVariant v;
    v.key = key;
    it = g.device_compiled.insert(g.device_compiled.end(), std::move(v));
  }
  if (it->kernel || it->failed) return it->kernel;
  if (opt.mode != NativeJitOptions::Mode::Sync && ++it->runs < 2) return nullptr;
  it->kernel = obtain_kernel(backend, DeviceGenerator(g, key).source());
  it->failed = !it->kernel;
  return it->kernel;
}

}  // namespace

std::string device_kernel_source(const FusedGroup& g, const DeviceVariantKey& key) {
  return DeviceGenerator(g, key).source();
}

int device_kernel_slots(const FusedGroup& g, const DeviceVariantKey& key) {
  return slot_layout(g, key).total;
}

int64_t device_fused_runs() { return g_device_runs.load(std::memory_order_relaxed); }

bool run_fused_on_device(const FusedGroup& g, KernelArgs& args, Device device) {
  DeviceBackend* backend = cuda_backend();
  if (!backend || !device.is_cuda() || native_jit_options().mode == NativeJitOptions::Mode::Off)
    return false;
  DeviceRun r;
  if (!plan_dtype_and_shape(g, args, device, r.key.dtype, r.shape)) return false;
  for (int64_t s : r.shape) r.n *= s;
  if (r.n == 0) return false;
  bool planned = r.key.dtype == DType::Float64 ? plan_device_run<double>(g, args, r)
                                               : plan_device_run<float>(g, args, r);
  if (!planned) return false;
  std::shared_ptr<DeviceKernel> kernel = variant_kernel(g, r.key, *backend);
  if (!kernel) return false;
  const SlotLayout& layout = r.layout;  // made once, by plan_device_run
  std::vector<Tensor> outs(args.num_outputs());
  for (uint32_t k = 0; k < args.num_outputs(); ++k) {
    if (g.is_dtype_output(k)) continue;
    outs[k] = Tensor::empty(r.shape, r.key.out_bool >> k & 1 ? DType::Bool : r.key.dtype, device);
    r.slots[layout.output[k]] = pointer_slot(outs[k].impl()->data());
  }
  constexpr int64_t kBlock = DeviceBackend::kKernelBlock;
  int64_t threads = r.key.ndim == 0 && r.slots[1] ? (r.n / kLanes + 1) / 2 : r.n;
  int64_t blocks = std::min<int64_t>(std::max<int64_t>((threads + kBlock - 1) / kBlock, 1), 65536);
  backend->launch_kernel(*kernel, blocks, r.slots.data(), r.slots.size() * sizeof(uint64_t));
  for (uint32_t k = 0; k < args.num_outputs(); ++k) {
    if (g.is_dtype_output(k)) {
      args.out(k) = IValue(r.key.out_bool >> k & 1 ? DType::Bool : r.key.dtype);
    } else {
      args.out(k) = IValue(std::move(outs[k]));
    }
  }
  g_device_runs.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace tsl::fusion
