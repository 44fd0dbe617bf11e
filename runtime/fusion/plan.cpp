// Planning one run of a fused program. See runtime/fusion/plan.h.
#include "runtime/fusion/plan.h"

#include <algorithm>
#include <optional>
#include <span>

namespace tsl::fusion {

bool broadcast_into(DimVector& acc, std::span<const int64_t> s) {
  if (s.size() > acc.size()) {
    DimVector wider(s.size(), 1);
    std::copy(acc.data(), acc.data() + acc.size(), wider.data() + (s.size() - acc.size()));
    acc = std::move(wider);
  }
  size_t lead = acc.size() - s.size();
  for (size_t d = 0; d < s.size(); ++d) {
    int64_t& a = acc.data()[lead + d];
    if (a == s[d] || s[d] == 1) continue;
    if (a != 1) return false;
    a = s[d];
  }
  return true;
}

bool plan_dtype_and_shape(const FusedGroup& g, const KernelArgs& args, Device device, DType& dtype,
                          DimVector& shape) {
  bool have_float = false, have_tensor = false;
  for (uint32_t k = 0; k < g.num_inputs; ++k) {
    const IValue& v = args.in(k);
    if (!v.is_tensor()) {
      if (!v.is_number() && !v.is_none() && !v.is_dtype()) return false;
      continue;
    }
    const TensorImpl* t = v.tensor_impl();
    if (!t || t->device() != device) return false;
    DType d = t->dtype();
    if (d == DType::Float32 || d == DType::Float64) {
      if (have_float && d != dtype) return false;
      dtype = d;
      have_float = true;
    } else if (d != DType::Bool) {
      return false;
    }
    if (!have_tensor) {
      shape = t->sizes();
    } else if (t->sizes() != shape && !broadcast_into(shape, t->sizes())) {
      return false;
    }
    have_tensor = true;
  }
  if (!have_float) dtype = DType::Float32;
  return have_tensor;
}

bool all_strides_zero(const TensorImpl* t) {
  for (int64_t s : t->strides()) {
    if (s != 0) return false;
  }
  return t->numel() > 0;
}

namespace {

// The kind a computation on these tensor operands has: on T when one is a T tensor
// (PyTorch promotes the others, numbers and bools, to T), on bools when all are bool
// tensors; none otherwise (numbers only, or a bool tensor with numbers).
std::optional<VKind> promote(std::span<const ValueInfo* const> operands) {
  bool any_float = false, all_bool = true;
  for (const ValueInfo* o : operands) {
    any_float |= o->kind == VKind::Float;
    all_bool &= o->kind == VKind::Bool;
  }
  if (any_float) return VKind::Float;
  if (all_bool) return VKind::Bool;
  return std::nullopt;
}

// where(cond, self, other): a bool condition; self and other promote, or are two
// numbers of which one is a float, which give the default dtype, float32.
std::optional<VKind> where_kind(const ValueInfo* cond, const ValueInfo* b, const ValueInfo* c,
                                DType dtype) {
  if (cond->kind != VKind::Bool) return std::nullopt;
  const ValueInfo* values[] = {b, c};
  if (std::optional<VKind> k = promote(values)) return k;
  bool numbers = !is_tensor_kind(b->kind) && !is_tensor_kind(c->kind);
  bool some_float = b->kind == VKind::FloatNum || c->kind == VKind::FloatNum;
  if (numbers && some_float && dtype == DType::Float32) return VKind::Float;
  return std::nullopt;
}

// The kind of a step's result by its row (runtime/fused_ops.def), or none when the
// fused loop cannot compute it as the kernel does (See Note [Bool values in the fused
// program]). Casts are cast_kind's.
std::optional<VKind> result_kind(const Step& s, const ValueInfo* a, const ValueInfo* b,
                                 const ValueInfo* c, DType dtype, bool positions_matter) {
  const FusedOpInfo& f = fused_info(s.op);
  if (f.result == FusedResult::Select) return where_kind(a, b, c, dtype);
  const ValueInfo* values[] = {a, b};
  std::span<const ValueInfo* const> operands(values, f.operands);
  for (const ValueInfo* o : operands) {
    if (!f.bool_operands() && o->kind == VKind::Bool) return std::nullopt;
  }
  std::optional<VKind> k = promote(operands);
  if (f.is_simd() && positions_matter && !a->contiguous) return std::nullopt;
  if (f.result == FusedResult::Float) {
    if (k != VKind::Float) return std::nullopt;
    return VKind::Float;
  }
  if (!k) return std::nullopt;
  return VKind::Bool;
}

// The kind of a Cast's result: its operand's, when the target dtype is the operand's
// own (Note [Conversions in the fused program]); none otherwise.
std::optional<VKind> cast_kind(const Step& s, const ValueInfo* a, const ValueInfo* input,
                               const ValueInfo* of, DType dtype) {
  auto dtype_of_kind = [dtype](VKind k) -> std::optional<DType> {
    if (k == VKind::Float) return dtype;
    if (k == VKind::Bool) return DType::Bool;
    return std::nullopt;
  };
  std::optional<DType> want;
  if (s.has_dtype) {
    want = s.dtype;
  } else if (input) {
    if (input->kind == VKind::DTypeNum) want = input->dtype;
  } else if (of) {
    want = dtype_of_kind(of->kind);
  }
  std::optional<DType> have = dtype_of_kind(a->kind);
  if (!want || !have || *want != *have) return std::nullopt;
  return a->kind;
}

// Whether a step's result has the result's shape; the shape of a smaller one goes to
// `shapes`. An outer product of broadcast operands may still have the result's shape.
bool plan_shape(ValueInfo& r, std::initializer_list<const ValueInfo*> operands,
                const DimVector& result_shape, Shapes& shapes) {
  for (const ValueInfo* o : operands) {
    if (o && is_tensor_kind(o->kind)) r.full |= o->full;
  }
  if (!r.full) {
    DimVector shape;
    for (const ValueInfo* o : operands) {
      if (o && is_tensor_kind(o->kind) && !broadcast_into(shape, shapes[o->shape])) return false;
    }
    r.full = shape == result_shape;
    if (!r.full) {
      r.shape = static_cast<int16_t>(shapes.size());
      shapes.push_back(std::move(shape));
    }
  }
  r.contiguous = r.full;
  return true;
}

}  // namespace

bool plan_kinds(const FusedGroup& g, DType dtype, const DimVector& result_shape,
                const ValueInfo* inputs, Shapes& shapes, uint64_t& out_bool,
                bool positions_matter) {
  ValueInfo regs[kMaxProgramRegisters];
  ValueInfo imm_int, imm_float;
  imm_int.kind = VKind::IntNum;
  imm_float.kind = VKind::FloatNum;
  auto info = [&](const Operand& o) -> const ValueInfo* {
    switch (o.kind) {
      case Operand::Kind::Input:
        return &inputs[o.index];
      case Operand::Kind::Reg:
        return &regs[o.index];
      case Operand::Kind::Imm:
        return o.imm_is_int ? &imm_int : &imm_float;
      default:
        return nullptr;
    }
  };
  // The casts that are no steps, checked where they would run.
  size_t next_check = 0;
  auto check_casts = [&](size_t before) {
    for (; next_check < g.cast_checks.size() && g.cast_checks[next_check].before == before;
         ++next_check) {
      const Step& s = g.cast_checks[next_check].cast;
      if (!cast_kind(s, info(s.a), info(s.s0), info(s.s1), dtype)) return false;
    }
    return true;
  };
  for (size_t i = 0; i < g.steps.size(); ++i) {
    if (!check_casts(i)) return false;
    const Step& s = g.steps[i];
    const ValueInfo *a = info(s.a), *b = info(s.b), *c = info(s.c);
    bool cast = fused_info(s.op).result == FusedResult::Cast;
    std::optional<VKind> kind = cast ? cast_kind(s, a, info(s.s0), info(s.s1), dtype)
                                     : result_kind(s, a, b, c, dtype, positions_matter);
    if (!kind) return false;
    ValueInfo r;
    r.kind = *kind;
    if (!plan_shape(r, {a, b, c}, result_shape, shapes)) return false;
    // The kernel returns the operand itself: a SIMD op reading it takes the path it
    // takes on the operand.
    if (cast) r.contiguous = a->contiguous;
    regs[s.dst] = r;
  }
  if (!check_casts(g.steps.size())) return false;
  out_bool = 0;
  if (g.return_regs.size() > 64) return false;
  for (size_t k = 0; k < g.return_regs.size(); ++k) {
    if (g.is_dtype_output(k)) {
      // dtype(v): T or bool by v's kind (out_bool says which).
      const ValueInfo* v = info(g.return_dtypes[k]);
      if (!v || !is_tensor_kind(v->kind)) return false;
      if (v->kind == VKind::Bool) out_bool |= uint64_t{1} << k;
      continue;
    }
    const ValueInfo& r = regs[g.return_regs[k]];
    if (!r.full) return false;
    if (r.kind == VKind::Bool) out_bool |= uint64_t{1} << k;
  }
  return true;
}

}  // namespace tsl::fusion
