// Linking the calls between the graphs of one IR text, and the callee lookup of the
// `inline` pass over such graphs. See Note [Calls in IR text] in ir_parser.h.
#include "ir/ir_parser_calls.h"

#include <unordered_map>

#include "ir/ir_parser.h"

namespace tsl {
namespace {

// The attribute that holds a call's callee: an object, so the printer leaves it out
// (the call prints as `CallFunction[name='g'](...)`, and the text links it again).
constexpr const char* kCalleeAttr = "callee";

class LinkedCallee : public ObjectImpl {
 public:
  explicit LinkedCallee(std::unique_ptr<Graph> g) : graph(std::move(g)) {}
  std::string repr() const override { return "<callee graph " + graph->name() + ">"; }
  std::unique_ptr<const Graph> graph;
};

class Linker {
 public:
  Linker(const std::vector<std::unique_ptr<Graph>>& graphs, const std::vector<CallSite>& calls)
      : graphs_(graphs), state_(graphs.size(), State::Unlinked), calls_of_(graphs.size()) {
    for (size_t i = 0; i < graphs.size(); ++i) {
      index_.emplace(graphs[i]->name(), index_.count(graphs[i]->name()) ? kAmbiguous : i);
      graph_index_.emplace(graphs[i].get(), i);
    }
    for (const CallSite& c : calls) calls_of_[graph_index_.at(c.call->owning_graph())].push_back(c);
  }

  void run() {
    for (size_t i = 0; i < graphs_.size(); ++i) link(i);
  }

 private:
  static constexpr size_t kAmbiguous = SIZE_MAX;
  enum class State { Unlinked, Linking, Linked };

  // Links the calls of graph i, callees first (depth first: a callee met while it is
  // being linked calls itself).
  void link(size_t i) {
    if (state_[i] == State::Linked) return;
    state_[i] = State::Linking;
    for (const CallSite& c : calls_of_[i]) link_call(c);
    state_[i] = State::Linked;
  }

  void link_call(const CallSite& c) {
    const std::string& name = c.call->attr("name").to_str();
    auto it = index_.find(name);
    // Not in this text, or in it several times: the inline pass reports it.
    if (it == index_.end() || it->second == kAmbiguous) return;
    size_t j = it->second;
    if (state_[j] == State::Linking) {
      compile_error(c.range, "recursive call of '" + name + "' (calls cannot be inlined)");
    }
    link(j);
    const Graph& callee = *graphs_[j];
    if (callee.inputs().size() != c.call->inputs().size() ||
        callee.outputs().size() != c.call->outputs().size()) {
      compile_error(c.range, str("the call of '", name, "' has ", c.call->inputs().size(),
                                 " inputs and ", c.call->outputs().size(), " outputs, but graph '",
                                 name, "' has ", callee.inputs().size(), " parameters and ",
                                 callee.outputs().size(), " results"));
    }
    auto object = IntrusivePtr<ObjectImpl>(new LinkedCallee(callee.clone()));
    c.call->set_attr(kCalleeAttr, IValue(std::move(object)));
  }

  const std::vector<std::unique_ptr<Graph>>& graphs_;
  std::vector<State> state_;
  std::vector<std::vector<CallSite>> calls_of_;
  std::unordered_map<std::string, size_t> index_;
  std::unordered_map<const Graph*, size_t> graph_index_;
};

}  // namespace

void link_calls(const std::vector<std::unique_ptr<Graph>>& graphs,
                const std::vector<CallSite>& calls) {
  Linker(graphs, calls).run();
}

const Graph* ir_text_callee(const Node* call) {
  const std::string& name = call->attr("name").to_str();
  TSL_CHECK(call->has_attr(kCalleeAttr), "cannot inline the call of '", name,
            "': the IR text defines no graph named '", name, "', or several");
  const auto* callee = dynamic_cast<const LinkedCallee*>(&call->attr(kCalleeAttr).to_object());
  TSL_INTERNAL_ASSERT(callee != nullptr, "the callee attribute of a call is not a graph");
  return callee->graph.get();
}

}  // namespace tsl
