// Running FusionGroup nodes: the fused chunk loop (chunk_loop.cpp) when a run allows
// it, else the op-by-op fallback here. See Note [Running a FusionGroup] in fusion.h.
#include "runtime/fusion/fusion.h"

#include <atomic>
#include <vector>

#include "runtime/fusion/device_kernels.h"
#include "runtime/fusion/program.h"
#include "runtime/tensor/cpu_capability.h"
#include "runtime/tensor/device_backend.h"

namespace tsl {

namespace fusion {

// The chunk loop of each CPU capability (chunk_loop.cpp).
TSL_CAPABILITY_DECLARE(bool run_fused(const FusedGroup& g, KernelArgs& args))

bool run_fused(const FusedGroup& g, KernelArgs& args) {
  using Fn = bool (*)(const FusedGroup&, KernelArgs&);
  static constexpr Fn kEntries[] = {TSL_CAPABILITY_ENTRIES(run_fused)};
  return cpu::for_active_capability(kEntries)(g, args);
}

namespace {
std::atomic<int64_t> g_compiled_runs{0};
}  // namespace

void note_compiled_run() { g_compiled_runs.fetch_add(1, std::memory_order_relaxed); }

int64_t compiled_runs() { return g_compiled_runs.load(std::memory_order_relaxed); }

}  // namespace fusion

namespace {

std::atomic<int64_t> g_fused{0};
std::atomic<int64_t> g_fallback{0};

// The block's nodes one by one with the ordinary kernels: the same results and errors
// as without fusion.
void run_fallback(const fusion::FusedGroup& g, KernelArgs& args) {
  std::vector<IValue> slots(g.num_slots);
  for (uint32_t i = 0; i < g.num_inputs; ++i) slots[i] = args.in(i);
  for (const auto& [s, v] : g.constants) slots[s] = v;
  for (const fusion::FallbackStep& step : g.fallback) {
    KernelArgs ka(slots.data(), step.ins.data(), static_cast<uint32_t>(step.ins.size()),
                  step.outs.data(), static_cast<uint32_t>(step.outs.size()));
    if (step.dispatch && device_tensors_created()) {
      dispatch_kernel(step.op, step.fn, ka)(ka);
    } else {
      step.fn(ka);
    }
  }
  for (uint32_t i = 0; i < args.num_outputs(); ++i) args.out(i) = slots[g.return_slots[i]];
  g_fallback.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

IValue compile_fusion_group(const Node* n) {
  TSL_INTERNAL_ASSERT(n->op() == OpId::FusionGroup, "compile_fusion_group of ", n->info().name);
  return IValue(IntrusivePtr<ObjectImpl>(fusion::compile_group(n)));
}

void run_fusion_group(KernelArgs& args) {
  const auto& g =
      static_cast<const fusion::FusedGroup&>(args.in(args.num_inputs() - 1).to_object());
  // The fused loop and its compiled kernels run on the CPU; on a GPU the group runs as
  // one generated kernel (Note [Fused kernels on CUDA] in device_kernels.cpp) where it
  // can, else its ops one by one with the device's kernels.
  Device device = device_tensors_created() ? kernel_device(args) : kCPU;
  bool fused = g.fusable && (device.is_cpu() ? fusion::run_fused(g, args)
                                             : fusion::run_fused_on_device(g, args, device));
  if (fused) {
    g_fused.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  run_fallback(g, args);
}

FusionCounters fusion_counters() {
  return {g_fused.load(std::memory_order_relaxed), g_fallback.load(std::memory_order_relaxed),
          fusion::compiled_runs(), fusion::device_fused_runs()};
}

}  // namespace tsl
