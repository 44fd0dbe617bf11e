// The IR text parser: reads what print_graph prints back into an equal Graph, so that
// passes can be tested IR-in/IR-out and `tsl --ir FILE.ir` can run them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"

namespace tsl {

// Note [IR text format]
// One graph is a header, its nodes, and a return line; blocks nest under their node:
//
//   graph f(%x : Tensor, %n : int):
//     %0 : bool = Constant[value=True]()
//     %y : Tensor = Loop(%n, %0, %x)  # 3:5
//       block0(%i : int, %y.1 : Tensor):
//         %y.2 : Tensor = relu(%y.1)
//         -> (%0, %y.2)
//     return (%y)
//
// Ops are named by their full schema name (`max.dim`, `add.int`); attributes are
// Python reprs. Indentation is not significant. `#` starts a comment, except that a
// trailing `# line:col` after a node is kept as the node's source position (the
// position in the program the IR came from; its Source holds no text). Value names
// become debug names: `%12` is a temporary, `%y.2` the value named `y` when the
// printer would again call it `y.2`. Names are unique in a graph. The graph name is
// everything between `graph ` and the parameter list, so `grad(f)` reads back.

// Note [Calls in IR text]
// A text may hold several graphs, and `CallFunction[name='g'](%x)` calls the graph
// named `g` of the same text (before or after the caller):
//
//   graph g(%a : Tensor):
//     %b : Tensor = relu(%a)
//     return (%b)
//
//   graph f(%x : Tensor):
//     %y : Tensor = CallFunction[name='g'](%x)
//     return (%y)
//
// The parser links each such call to a copy of its callee (an object attribute, which
// the printer leaves out, so printing gives the same text back); the `inline` pass
// replaces the call by the callee's body. A call of a name that no graph of the text
// has (a graph printed alone), or several, parses, and only inlining it is an error.
// Calls with another number of inputs or outputs than the callee's, and recursive
// calls, are compile errors at the call. `tsl --dump=ir` prints
// every function, callees included, so its output inlines as it is.

// Parses exactly one graph. Errors are compile-kind SourceErrors located in `text`
// (`file:line:col: error: ...`); the result has passed verify().
std::unique_ptr<Graph> parse_graph(std::string_view text, const std::string& filename = "<ir>");

// Parses a file of zero or more graphs (what `tsl --dump=ir` prints). With `headers`,
// the range of each graph's `graph NAME` in `text` (where `tsl --ir` reports what a
// pass found wrong with a graph as a whole).
std::vector<std::unique_ptr<Graph>> parse_graphs(std::string_view text,
                                                 const std::string& filename = "<ir>",
                                                 std::vector<SourceRange>* headers = nullptr);

// The graph a call of parsed IR text calls (See Note [Calls in IR text]); a user error
// when the text has no graph of its name. The callee lookup of the `inline` pass.
const Graph* ir_text_callee(const Node* call);

}  // namespace tsl
