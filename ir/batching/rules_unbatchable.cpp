// Ops that cannot run on a batch and whose rule is functorch's error: reading a batched
// value into a Python number or bool (control flow on it, .item()), random numbers,
// printing and saving, and the autograd state of a batched value. A few ops with no
// effect on values (AutogradNoAlias's check) run on the physical values as they are.
#include "ir/batching/batching_rules.h"

namespace tsl::batching {
namespace {

const char* const kDataDependent =
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
    "flow. We don't support that yet, please shout over at "
    "https://github.com/pytorch/functorch/issues/257 .";

const char* const kItem =
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling "
    ".item() on a Tensor, please try to rewrite what you're doing with other operations.";

const char* const kRandom =
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation out of "
    "vmap";

std::vector<BVal> data_dependent_rule(BatchRuleContext& c) { c.error(kDataDependent); }

std::vector<BVal> item_rule(BatchRuleContext& c) { c.error(kItem); }

std::vector<BVal> random_rule(BatchRuleContext& c) { c.error(kRandom); }

std::vector<BVal> allclose_rule(BatchRuleContext& c) {
  c.error(
      "vmap over torch.allclose isn't supported yet (its result is one bool for the whole "
      "batch)");
}

std::vector<BVal> output_rule(BatchRuleContext& c) {
  c.error("vmap: `" + c.op_name() +
          "` of a batched value is not supported (functorch would show a BatchedTensor); return "
          "the value from the function and use it after vmap");
}

std::vector<BVal> tensor_rule(BatchRuleContext& c) {
  c.error(
      "vmap: torch.tensor() of batched values is not supported (it would read their "
      "numbers); build the tensor with torch.stack or torch.cat");
}

std::vector<BVal> autograd_state_rule(BatchRuleContext& c) {
  c.error("vmap: `" + c.op_name() +
          "` reads or changes the autograd state of a batched value, which has none of its own "
          "under vmap; use functorch's grad inside vmap instead");
}

// AutogradNoAlias(message, self, others...): a check of storage, the same on the batch.
std::vector<BVal> check_rule(BatchRuleContext& c) {
  std::vector<BVal> out;
  for (Sym s : c.call_with({})) out.push_back(unbatched(s));
  return out;
}

}  // namespace

const char* randomness_error() { return kRandom; }

void register_unbatchable_ops(BatchingTable& table) {
  TSL_BATCHING(Bool_Tensor, data_dependent_rule);
  TSL_BATCHING(Int_Tensor, item_rule);
  TSL_BATCHING(Float_Tensor, item_rule);
  TSL_BATCHING(item, item_rule);
  TSL_BATCHING(item_float, item_rule);
  TSL_BATCHING(item_int, item_rule);
  TSL_BATCHING(item_bool, data_dependent_rule);
  TSL_BATCHING(tolist, item_rule);
  TSL_BATCHING(allclose, allclose_rule);
  TSL_BATCHING(rand_like, random_rule);
  TSL_BATCHING(randn_like, random_rule);
  TSL_BATCHING(dropout, random_rule);
  TSL_BATCHING(print, output_rule);
  TSL_BATCHING(Str, output_rule);
  TSL_BATCHING(format, output_rule);
  TSL_BATCHING(save, output_rule);
  TSL_BATCHING(tensor, tensor_rule);
  TSL_BATCHING(backward, autograd_state_rule);
  TSL_BATCHING(grad_attr, autograd_state_rule);
  TSL_BATCHING(set_grad_attr, autograd_state_rule);
  TSL_BATCHING(set_requires_grad_attr, autograd_state_rule);
  TSL_BATCHING(grad_fn_attr, autograd_state_rule);
  TSL_BATCHING(requires_grad_, autograd_state_rule);
  TSL_BATCHING(AutogradNoAlias, check_rule);
}

}  // namespace tsl::batching
