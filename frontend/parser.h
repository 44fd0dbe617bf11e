// Parsing source text into the AST (frontend/ast.h): Python's layout and syntax
// (LANGUAGE.md §1, §4, §5), with every syntax error a compile error at its location.
#pragma once

#include <string>
#include <string_view>

#include "frontend/ast.h"

namespace tsl {

// A whole file, `-c` code or REPL input. Throws SourceError (compile) at the first error.
ast::Module parse_module(SourcePtr source);
// One expression (or a tuple without parentheses), e.g. the REPL's `:type EXPR`.
ast::ExprPtr parse_expression(SourcePtr source);

// For the REPL: Incomplete when more lines could complete the input (an open bracket,
// a trailing backslash, an unterminated triple-quoted string, a block header or an
// indented block not yet ended by a blank line); Invalid for a syntax error; else
// Complete. Never throws.
enum class InputStatus { Complete, Incomplete, Invalid };
InputStatus classify_input(std::string_view text);

// The readable AST of `tsl --dump=ast`: one node per line with its line:col.
std::string dump_ast(const ast::Module& m);

}  // namespace tsl
