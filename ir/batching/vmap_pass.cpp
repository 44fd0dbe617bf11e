// The `vmap` pass of `tsl --ir` and the IR tests (tests/ir/passes/vmap): vmap over dim 0
// of every Tensor input, the graph replaced in place (see vmap.h).
#include <unordered_map>

#include "ir/batching/vmap.h"

namespace tsl::batching {

void vmap_every_tensor_input(Graph& g) {
  VmapSpec spec;
  spec.where = "vmap(" + g.name() + ", in_dims=0, ...)";
  spec.function_name = g.name();
  for (const Value* in : g.inputs())
    spec.in_dims.push_back(in->type()->is_tensor() ? std::optional<int64_t>(0) : std::nullopt);
  for (const Value* out : g.outputs()) {
    size_t n = out->type()->kind() == TypeKind::Tuple ? out->type()->contained().size() : 1;
    spec.out_dims.insert(spec.out_dims.end(), n, std::optional<int64_t>(0));
  }
  std::shared_ptr<Graph> batched = vmap_graph(g, spec);
  // g's contents replaced by the batched graph's.
  while (!g.outputs().empty()) g.block()->erase_return(0);
  std::vector<Node*> nodes;
  for (Node* n : *g.block()) nodes.push_back(n);
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) (*it)->destroy();
  std::unordered_map<const Value*, Value*> map;
  for (size_t i = 0; i < batched->inputs().size(); ++i) map[batched->inputs()[i]] = g.inputs()[i];
  InsertPointGuard at(g, g.block());
  for (Value* r : g.clone_block_into(batched->block(), g.block(), map)) g.add_output(r);
}

}  // namespace tsl::batching
