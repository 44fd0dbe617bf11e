// Batching rules of neural-network ops. Losses decompose into the ops they are made of
// (log_softmax, gather, sums), each batched by its own rule, so that each batch element
// gets its own reduction; convolutions and pools see the batch as more images; the
// per-sample weight gradient of conv2d is a grouped convolution (functorch's trick).
#include "ir/batching/batching_rules.h"

namespace tsl::batching {
namespace {

using namespace autodiff;

Sym list_slice(Sym list, Arg start, Arg end) {
  Sym s = call(OpId::slice_list, {list, start, end, 1});
  s.value()->set_type(Type::list(Type::int_()));
  return s;
}

Sym list_concat(Sym a, Sym b) {
  Sym s = call(OpId::add_list, {a, b});
  s.value()->set_type(Type::list(Type::int_()));
  return s;
}

// The reduction name of a loss (a constant string).
std::string reduction_of(const BatchRuleContext& c, size_t i) {
  const IValue* r = c.constant_input(i);
  if (!r || !r->is_str()) c.error("vmap: `" + c.op_name() + "` needs a constant reduction");
  return r->to_str();
}

// A tensor given for an Optional[Tensor] parameter, without the Optional.
BVal optional_tensor(const BatchRuleContext& c, size_t i) {
  BVal v = c.in(i);
  if (v.value->type()->kind() == TypeKind::Optional) {
    if (v.value->node()->op() != OpId::to_optional) {
      c.error("vmap: `" + c.op_name() +
              "` with an optional tensor that may be None at run time "
              "is not supported");
    }
    v.value = v.value->node()->input(0);
  }
  return v;
}

BVal reduce(const BatchRuleContext& c, BVal loss, const std::string& reduction, BVal total) {
  if (reduction == "none") return loss;
  BVal sum = c.apply(OpId::sum, {loss});
  if (reduction == "sum") return sum;
  if (reduction != "mean") c.error("vmap: unknown reduction '" + reduction + "'");
  return total.value ? c.apply(OpId::div, {sum, total}) : c.apply(OpId::mean, {loss});
}

// nll_loss of log-probabilities lp ([C], or [N, C, ...] with the classes in dim 1):
// -w[t] lp[t] per target, averaged by the weights of the targets kept.
BVal nll_loss(const BatchRuleContext& c, BVal lp, BVal target, size_t weight, size_t ignore,
              size_t reduction) {
  Sym cdim = call(OpId::min_int, {call(OpId::sub_int, {c.logical_rank(lp), 1}), 1});
  BVal keep = c.apply(OpId::ne, {target, c.in(ignore)});
  BVal safe = c.apply(OpId::where, {keep, target, 0});
  BVal index = c.apply(OpId::unsqueeze, {safe, cdim});
  BVal picked = c.apply(OpId::squeeze_dim, {c.apply(OpId::gather, {lp, cdim, index}), cdim});
  BVal w = c.apply(OpId::to_dtype, {keep, c.apply(OpId::dtype, {lp})});
  if (!c.is_none(weight)) {
    BVal rows = c.apply(OpId::index_select,
                        {optional_tensor(c, weight), 0, c.apply(OpId::flatten, {safe})});
    w = c.apply(OpId::mul, {w, c.apply(OpId::reshape, {rows, c.apply(OpId::size, {target})})});
  }
  BVal loss = c.apply(OpId::neg, {c.apply(OpId::mul, {picked, w})});
  std::string red = reduction_of(c, reduction);
  return reduce(c, loss, red, red == "mean" ? c.apply(OpId::sum, {w}) : BVal{});
}

std::vector<BVal> nll_loss_rule(BatchRuleContext& c) {
  return {nll_loss(c, c.in(0), c.in(1), 2, 3, 4)};
}

std::vector<BVal> cross_entropy_rule(BatchRuleContext& c) {
  const IValue* ls = c.constant_input(5);
  if (!ls || !ls->is_number() || ls->to_double() != 0.0)
    c.error("vmap: cross_entropy with label_smoothing is not supported under vmap");
  Sym cdim = call(OpId::min_int, {call(OpId::sub_int, {c.logical_rank(c.in(0)), 1}), 1});
  BVal lp = c.apply(OpId::log_softmax, {c.in(0), cdim});
  return {nll_loss(c, lp, c.in(1), 2, 3, 4)};
}

std::vector<BVal> mse_loss_rule(BatchRuleContext& c) {
  BVal d = c.apply(OpId::sub, {c.in(0), c.in(1)});
  return {reduce(c, c.apply(OpId::mul, {d, d}), reduction_of(c, 2), BVal{})};
}

// PyTorch's formula: (t - 1) max(log1p(-p), -100) - t max(log(p), -100), times weight.
std::vector<BVal> binary_cross_entropy_rule(BatchRuleContext& c) {
  BVal p = c.in(0), t = c.in(1);
  BVal log_p = c.apply(OpId::clamp, {c.apply(OpId::log, {p}), -100.0});
  BVal log_q = c.apply(OpId::clamp, {c.apply(OpId::log1p, {c.apply(OpId::neg, {p})}), -100.0});
  BVal loss = c.apply(OpId::sub, {c.apply(OpId::mul, {c.apply(OpId::sub, {t, 1}), log_q}),
                                  c.apply(OpId::mul, {t, log_p})});
  if (!c.is_none(2)) loss = c.apply(OpId::mul, {loss, optional_tensor(c, 2)});
  return {reduce(c, loss, reduction_of(c, 3), BVal{})};
}

// layer_norm(x, shape, w, b, eps): the last dims of each batch element; a batched
// weight or bias is applied after normalizing.
std::vector<BVal> layer_norm_rule(BatchRuleContext& c) {
  if (!c.batched(2) && !c.batched(3)) return all_batched(c.call_with({}));
  Value* none = constant(IValue(), Type::optional(Type::tensor()));
  BVal y = c.apply(OpId::layer_norm,
                   {c.in(0), c.in(1), unbatched(none), unbatched(none), c.in(4), c.in(5)});
  if (!c.is_none(2)) y = c.apply(OpId::mul, {y, optional_tensor(c, 2)});
  if (!c.is_none(3)) y = c.apply(OpId::add, {y, optional_tensor(c, 3)});
  return {y};
}

// layer_norm_rstd(x, shape, eps): the last dims of each batch element, which stay last
// with the batch dim in front.
std::vector<BVal> layer_norm_rstd_rule(BatchRuleContext& c) { return all_batched(c.call_with({})); }

// embedding(input, weight, ...): rows of weight; a batched weight is indexed per batch
// element.
std::vector<BVal> embedding_rule(BatchRuleContext& c) {
  if (!c.batched(1)) return all_batched(c.call_with({}));
  if (!c.is_none(2))
    c.error("vmap: embedding with a batched weight and a padding_idx is not supported");
  Value* index =
      call(OpId::to_optional, {c.input(0)}).value()->set_type(Type::optional(Type::tensor()));
  Value* list =
      c.emitter().literal_list({{index, c.batched(0)}}, Type::list(Type::optional(Type::tensor())));
  return {c.apply(OpId::index, {c.in(1), unbatched(list)})};
}

std::vector<BVal> one_hot_rule(BatchRuleContext& c) {
  const IValue* n = c.constant_input(1);
  if (!n || !n->is_int() || n->to_int() < 0) {
    c.error(
        "vmap: one_hot needs num_classes under vmap (with -1 the number of classes would "
        "depend on the data of the whole batch)");
  }
  return all_batched(c.call_with({}));
}

// conv2d, the pools: the batch of images [B, N, C, H, W] (or [B, C, H, W]) is viewed as
// [B * N, C, H, W]; the result gets [B] + the logical leading dims back.
Sym as_images(Sym x) { return reshape(x, call(OpId::batched_merge_size, {size(x), 3})); }
Sym from_images(const BatchRuleContext& c, const BVal& like, Sym y) {
  Sym lead = list_slice(c.logical_size(like), 0, -3);
  return reshape(y, c.batched_size(list_concat(lead, list_slice(size(y), -3, std::nullopt))));
}

// A batch of images [B, (N,) C, H, W] as [N, B * C, H, W]: the batch in the channels,
// for a convolution with B times the groups.
Sym channels_of_batch(Sym b, Sym x) {
  Sym tail = list_slice(size(x), -3, std::nullopt);
  Graph& g = FormulaScope::graph();
  Node* lead = g.insert(
      g.create(OpId::ListConstruct, {b.value(), constant(IValue(int64_t{-1}), Type::int_())}, 1));
  lead->output()->set_type(Type::list(Type::int_()));
  Sym n_first = transpose(reshape(x, list_concat(lead->output(), tail)), 0, 1);
  Sym channels =
      call(OpId::mul_int, {b, call(OpId::getitem_list, {tail, 0}).value()->set_type(Type::int_())});
  Node* shape = g.insert(
      g.create(OpId::ListConstruct,
               {constant(IValue(int64_t{-1}), Type::int_()).value(), channels.value()}, 1));
  shape->output()->set_type(Type::list(Type::int_()));
  return reshape(n_first, list_concat(shape->output(), list_slice(tail, 1, std::nullopt)));
}

// The inverse: [N, B * O, H, W] as [B, N, O, H, W].
Sym batch_of_channels(Sym b, Sym y) {
  Sym tail = list_slice(size(y), -2, std::nullopt);
  Graph& g = FormulaScope::graph();
  Value* minus_one = constant(IValue(int64_t{-1}), Type::int_());
  Node* lead = g.insert(g.create(OpId::ListConstruct,
                                 {call(OpId::size_dim, {y, 0}).value(), b.value(), minus_one}, 1));
  lead->output()->set_type(Type::list(Type::int_()));
  return transpose(reshape(y, list_concat(lead->output(), tail)), 0, 1);
}

// conv2d with a batched weight or bias: one convolution with B times the groups, each
// batch element's images convolved with its own weight (functorch's trick).
std::vector<BVal> conv2d_batched_weight(BatchRuleContext& c) {
  Sym b = c.batch_size();
  Sym x = channels_of_batch(b, c.materialize(c.in(0)));
  Sym w = call(OpId::flatten, {c.materialize(c.in(1)), 0, 1});
  Value* bias = c.input(2);
  if (!c.is_none(2)) {
    Sym flat = call(OpId::flatten, {c.materialize(optional_tensor(c, 2)), 0, 1});
    bias = call(OpId::to_optional, {flat}).value()->set_type(Type::optional(Type::tensor()));
  }
  Sym groups = call(OpId::mul_int, {b, c.input(6)});
  Sym y = c.call_with({{0, x}, {1, w}, {2, bias}, {6, groups}}).at(0);
  return {batched(from_images(c, c.in(0), batch_of_channels(b, y)))};
}

std::vector<BVal> image_rule(BatchRuleContext& c) {
  if (c.op() == OpId::conv2d && (c.batched(1) || c.batched(2))) return conv2d_batched_weight(c);
  for (size_t i = 1; i < c.num_inputs(); ++i) {
    if (c.batched(i)) {
      c.error("vmap: `" + c.op_name() + "` with a batched weight or bias is not supported");
    }
  }
  std::vector<Sym> outs = c.call_with({{0, as_images(c.input(0))}});
  std::vector<BVal> r;
  for (Sym y : outs) r.push_back(batched(from_images(c, c.in(0), y)));
  return r;
}

// avg_pool2d_backward(grad, input, ...): shaped as input.
std::vector<BVal> pool_backward_rule(BatchRuleContext& c) {
  Sym input = c.materialize(c.in(1));
  Sym g = as_images(c.materialize(c.in(0)));
  Sym r = c.call_with({{0, g}, {1, as_images(input)}}).at(0);
  return {batched(reshape(r, size(input)))};
}

// conv2d_input_backward(grad, weight, input_size, ...): more images.
std::vector<BVal> conv_input_backward_rule(BatchRuleContext& c) {
  if (c.batched(1)) c.error("vmap: the gradient of conv2d with a batched weight is not supported");
  Sym full = c.batched_size(c.input(2));
  Sym images = call(OpId::batched_merge_size, {full, 3});
  Sym r = c.call_with({{0, as_images(c.input(0))}, {2, images}}).at(0);
  return {batched(reshape(r, full))};
}

// conv2d_weight_backward(grad, input, weight_size, ..., groups): each batch element's
// weight gradient, as one convolution with B times the groups: the batch moves into the
// channels ([N, B * C, H, W]).
std::vector<BVal> conv_weight_backward_rule(BatchRuleContext& c) {
  Sym b = c.batch_size();
  Sym grad = channels_of_batch(b, c.materialize(c.in(0)));
  Sym input = channels_of_batch(b, c.materialize(c.in(1)));
  Sym ws = c.input(2);
  Sym out_channels =
      call(OpId::mul_int, {b, call(OpId::getitem_list, {ws, 0}).value()->set_type(Type::int_())});
  Node* first = FormulaScope::graph().insert(
      FormulaScope::graph().create(OpId::ListConstruct, {out_channels.value()}, 1));
  first->output()->set_type(Type::list(Type::int_()));
  Sym weight_size = list_concat(first->output(), list_slice(ws, 1, std::nullopt));
  Sym groups = call(OpId::mul_int, {b, c.input(6)});
  Sym r = c.call_with({{0, grad}, {1, input}, {2, weight_size}, {6, groups}}).at(0);
  return {batched(reshape(r, c.batched_size(ws)))};
}

}  // namespace

void register_nn_batching(BatchingTable& table) {
  TSL_BATCHING(cross_entropy, cross_entropy_rule);
  TSL_BATCHING(nll_loss, nll_loss_rule);
  TSL_BATCHING(mse_loss, mse_loss_rule);
  TSL_BATCHING(binary_cross_entropy, binary_cross_entropy_rule);
  TSL_BATCHING(layer_norm, layer_norm_rule);
  TSL_BATCHING(layer_norm_rstd, layer_norm_rstd_rule);
  TSL_BATCHING(embedding, embedding_rule);
  TSL_BATCHING(one_hot, one_hot_rule);
  TSL_BATCHING(conv2d, image_rule);
  TSL_BATCHING(max_pool2d, image_rule);
  TSL_BATCHING(max_pool2d_indices, image_rule);
  TSL_BATCHING(avg_pool2d, image_rule);
  TSL_BATCHING(avg_pool2d_backward, pool_backward_rule);
  TSL_BATCHING(conv2d_input_backward, conv_input_backward_rule);
  TSL_BATCHING(conv2d_weight_backward, conv_weight_backward_rule);
}

}  // namespace tsl::batching
