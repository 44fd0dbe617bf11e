// The in-place forms of elementwise ops that have no kernel of their own (`sqrt_`,
// `clamp_`, `masked_fill_`, ...; Note [The op table]: INPLACE): the out-of-place op,
// run on the device of the inputs, then its result written into self. One generic
// kernel per such op, made from the op table, so a new INPLACE row needs nothing here.
#include <string>

#include "runtime/kernels/cpu/compose.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/op_info.h"
#include "runtime/tensor/grad_mode.h"

namespace tsl {
namespace {

using namespace opflags;

template <OpId Op>
void through_twin(KernelArgs& a) {
  static const OpId twin = *inplace_twin(Op);
  // The name is a view into the schema text, not NUL-terminated: a copy for messages.
  static const std::string name(op_info(Op).name);
  const Tensor& self = a.in(0).to_tensor();
  check_inplace_allowed(self, name.c_str());
  std::vector<IValue> args;
  args.reserve(a.num_inputs());
  for (uint32_t i = 0; i < a.num_inputs(); ++i) args.push_back(a.in(i));
  Tensor r = cpu::op1(twin, std::move(args));
  // PyTorch's checks of an in-place op's result (TensorIterator's).
  TSL_CHECK(can_cast(r.dtype(), self.dtype()), "result type ", scalar_type_name(r.dtype()),
            " can't be cast to the desired output type ", scalar_type_name(self.dtype()));
  TSL_CHECK(r.sizes() == self.sizes(), "output with shape ", shape_str(self.sizes()),
            " doesn't match the broadcast shape ", shape_str(r.sizes()));
  cpu::op1(OpId::copy_, {a.in(0), IValue(r)});
  a.out(0) = a.in(0);
}

// Registers through_twin<Op> for an INPLACE op without a kernel (instantiated only for
// those: the other rows' branch is discarded).
template <OpId Op, uint64_t Flags>
void add_if_inplace() {
  if constexpr ((Flags & INPLACE) != 0) {
    if (!has_device_kernel(DeviceType::CPU, Op) && !has_generic_kernel(Op) && inplace_twin(Op))
      register_generic_kernel(Op, &through_twin<Op>, -1);
  }
}

}  // namespace

void register_inplace_kernels() {
#define TSL_OP(id, schema, flags, doc) add_if_inplace<OpId::id, (flags)>();
#include "runtime/ops.def"
#undef TSL_OP
}

}  // namespace tsl
