// Parsing source text into the AST (placeholder API until the parser lands).
#pragma once

#include <string>
#include <string_view>

#include "frontend/ast.h"

namespace tsl {

ast::Module parse_module(SourcePtr source);
ast::ExprPtr parse_expression(SourcePtr source);
enum class InputStatus { Complete, Incomplete, Invalid };
InputStatus classify_input(std::string_view text);
std::string dump_ast(const ast::Module& m);

}  // namespace tsl
