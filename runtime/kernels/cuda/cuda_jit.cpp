// Kernels compiled at run time: NVRTC turns generated CUDA C++ into an image for the
// GPU (a cubin, or PTX for an architecture newer than the NVRTC at hand), the runtime
// loads it as a library and launches its kernel on TSL's stream. The fused kernels of
// FusionGroups use it (Note [Fused kernels on CUDA] in runtime/fusion/device_kernels.cpp).
#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/kernels/cuda/cuda_context.h"
#include "runtime/tensor/error.h"

namespace tsl::cuda {
namespace {

// NVRTC is opened on first use, as cuBLAS is (Note [cuBLAS opened on first use]):
// linked, it would load at every start of tsl.
struct NvrtcApi {
  decltype(&nvrtcVersion) version = nullptr;
  decltype(&nvrtcGetNumSupportedArchs) num_archs = nullptr;
  decltype(&nvrtcGetSupportedArchs) archs = nullptr;
  decltype(&nvrtcCreateProgram) create = nullptr;
  decltype(&nvrtcDestroyProgram) destroy = nullptr;
  decltype(&nvrtcCompileProgram) compile = nullptr;
  decltype(&nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&nvrtcGetProgramLog) log = nullptr;
  decltype(&nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&nvrtcGetCUBIN) cubin = nullptr;
  decltype(&nvrtcGetPTXSize) ptx_size = nullptr;
  decltype(&nvrtcGetPTX) ptx = nullptr;
  decltype(&nvrtcGetErrorString) error_string = nullptr;
  std::string missing;  // why NVRTC cannot be used, or empty
};

const NvrtcApi& nvrtc() {
  static const NvrtcApi api = [] {
    NvrtcApi a;
    void* lib = dlopen(TSL_NVRTC_SONAME, RTLD_NOW | RTLD_LOCAL);
#ifdef TSL_NVRTC_PATH
    if (!lib) lib = dlopen(TSL_NVRTC_PATH, RTLD_NOW | RTLD_LOCAL);
#endif
    if (!lib) {
      a.missing = std::string("cannot load NVRTC: ") + dlerror();
      return a;
    }
    auto look_up = [&](const char* name, auto& fn) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (!fn && a.missing.empty()) a.missing = std::string("NVRTC has no ") + name;
    };
    look_up("nvrtcVersion", a.version);
    look_up("nvrtcGetNumSupportedArchs", a.num_archs);
    look_up("nvrtcGetSupportedArchs", a.archs);
    look_up("nvrtcCreateProgram", a.create);
    look_up("nvrtcDestroyProgram", a.destroy);
    look_up("nvrtcCompileProgram", a.compile);
    look_up("nvrtcGetProgramLogSize", a.log_size);
    look_up("nvrtcGetProgramLog", a.log);
    look_up("nvrtcGetCUBINSize", a.cubin_size);
    look_up("nvrtcGetCUBIN", a.cubin);
    look_up("nvrtcGetPTXSize", a.ptx_size);
    look_up("nvrtcGetPTX", a.ptx);
    look_up("nvrtcGetErrorString", a.error_string);
    return a;
  }();
  return api;
}

// The architecture NVRTC compiles for: the device's own (a cubin), else the newest
// NVRTC knows below it (PTX, which the driver compiles for the device).
struct Target {
  int arch = 0;
  bool cubin = true;
};

Target target_for(int device_arch) {
  const NvrtcApi& api = nvrtc();
  int n = 0;
  std::vector<int> archs;
  if (api.num_archs(&n) == NVRTC_SUCCESS && n > 0) {
    archs.resize(static_cast<size_t>(n));
    if (api.archs(archs.data()) != NVRTC_SUCCESS) archs.clear();
  }
  if (archs.empty() || std::find(archs.begin(), archs.end(), device_arch) != archs.end())
    return {device_arch, true};
  int best = archs.front();
  for (int a : archs) {
    if (a <= device_arch) best = std::max(best, a);
  }
  return {best, false};
}

}  // namespace

int device_arch() {
  ensure_available();
  int major = 0, minor = 0;
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), "asking the GPU");
  check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0), "asking the GPU");
  return major * 10 + minor;
}

std::string nvrtc_identity(int device_arch) {
  const NvrtcApi& api = nvrtc();
  if (!api.missing.empty()) return "no nvrtc";
  int major = 0, minor = 0;
  api.version(&major, &minor);
  Target t = target_for(device_arch);
  return "nvrtc " + std::to_string(major) + "." + std::to_string(minor) + " " +
         (t.cubin ? "sm_" : "compute_") + std::to_string(t.arch);
}

std::string nvrtc_compile(const std::string& source, const std::string& name, int device_arch,
                          std::string& error) {
  const NvrtcApi& api = nvrtc();
  if (!api.missing.empty()) {
    error = api.missing;
    return {};
  }
  Target t = target_for(device_arch);
  nvrtcProgram prog = nullptr;
  nvrtcResult rc = api.create(&prog, source.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr);
  if (rc != NVRTC_SUCCESS) {
    error = std::string("NVRTC: ") + api.error_string(rc);
    return {};
  }
  // NVRTC's defaults are nvcc's (IEEE division and square root, no flush to zero,
  // contraction into FMAs inside an expression), as the unfused kernels are compiled.
  std::string arch =
      std::string("--gpu-architecture=") + (t.cubin ? "sm_" : "compute_") + std::to_string(t.arch);
  const char* options[] = {arch.c_str(), "--std=c++17", "-default-device"};
  rc = api.compile(prog, 3, options);
  std::string image;
  if (rc != NVRTC_SUCCESS) {
    size_t n = 0;
    api.log_size(prog, &n);
    std::string log(n, '\0');
    if (n > 0) api.log(prog, log.data());
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    error = std::string("NVRTC: ") + api.error_string(rc) + "\n" + log;
  } else {
    size_t n = 0;
    if (t.cubin) {
      api.cubin_size(prog, &n);
      image.resize(n);
      api.cubin(prog, image.data());
    } else {
      api.ptx_size(prog, &n);  // with its terminating NUL, which loading needs
      image.resize(n);
      api.ptx(prog, image.data());
    }
  }
  api.destroy(&prog);
  return image;
}

namespace {

class LoadedKernel final : public DeviceKernel {
 public:
  ~LoadedKernel() override {
    if (library) cudaLibraryUnload(library);
  }
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
};

}  // namespace

std::shared_ptr<DeviceKernel> load_kernel(const std::string& image, const std::string& name,
                                          std::string& error) {
  ensure_available();
  stream();  // the device is selected
  auto k = std::make_shared<LoadedKernel>();
  cudaError_t err =
      cudaLibraryLoadData(&k->library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (err == cudaSuccess) err = cudaLibraryGetKernel(&k->kernel, k->library, name.c_str());
  if (err != cudaSuccess) {
    cudaGetLastError();
    error = std::string("CUDA: cannot load a generated kernel: ") + cudaGetErrorString(err);
    return nullptr;
  }
  return k;
}

void launch_kernel(const DeviceKernel& kernel, int64_t blocks, int threads, const void* params,
                   size_t bytes) {
  TSL_INTERNAL_ASSERT(bytes <= 4096, "a generated kernel's parameter is too large");
  // cudaLaunchKernel takes a cudaKernel_t in place of a __global__ function's address.
  void* args[] = {const_cast<void*>(params)};
  const auto& k = static_cast<const LoadedKernel&>(kernel);
  dim3 grid(static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, 65535 * 16)));
  check(cudaLaunchKernel(reinterpret_cast<const void*>(k.kernel), grid,
                         dim3(static_cast<unsigned>(threads)), args, 0, stream()),
        "launching a fused kernel");
}

}  // namespace tsl::cuda
