// The TSL parser: Python 3 statement and expression syntax (LANGUAGE.md §1, §4, §5).
// It reads the token stream of frontend/lexer.cpp (logical NEWLINE, INDENT, DEDENT).
// Every decision is LL(1) or LL(2), so SLL prediction decides every valid program
// (Note [One parser] in frontend/parser.cpp). A parse costs about a rule invocation
// (a parse tree node) per rule entered, so the rules nest as little as the syntax
// allows: statements are not wrapped in a `stmt` rule, and an operand is `expr` and
// `power`, not a rule per precedence level.
parser grammar TSLParser;

options { tokenVocab = TSLLexer; superClass = ParserBase; contextSuperClass = ArenaContext; }

@parser::postinclude { #include "grammar/parser_base.h" }

// ---- Entry points ------------------------------------------------------------------------------
file_input : ( NEWLINE | simple_stmts | compound_stmt )* EOF ;
eval_input : testlist NEWLINE* EOF ;

// ---- Statements --------------------------------------------------------------------------------
simple_stmts : simple_stmt ( SEMI simple_stmt )* SEMI? NEWLINE ;
simple_stmt
  : expr_stmt
  | pass_stmt
  | break_stmt
  | continue_stmt
  | return_stmt
  | raise_stmt
  | assert_stmt
  | import_name
  | import_from
  ;

expr_stmt : testlist ( annassign | augassign testlist | ( ASSIGN testlist )* ) ;
annassign : COLON test ( ASSIGN testlist )? ;
augassign
  : ADD_ASSIGN | SUB_ASSIGN | MULT_ASSIGN | AT_ASSIGN | DIV_ASSIGN | MOD_ASSIGN | AND_ASSIGN
  | OR_ASSIGN | XOR_ASSIGN | LEFT_SHIFT_ASSIGN | RIGHT_SHIFT_ASSIGN | POWER_ASSIGN | IDIV_ASSIGN
  ;
pass_stmt : PASS ;
break_stmt : BREAK ;
continue_stmt : CONTINUE ;
return_stmt : RETURN testlist? ;
raise_stmt : RAISE ( test ( FROM test )? )? ;
assert_stmt : ASSERT test ( COMMA test )? ;
import_name : IMPORT dotted_as_name ( COMMA dotted_as_name )* ;
dotted_as_name : dotted_name ( AS NAME )? ;
import_from
  : FROM dotted_name IMPORT
    ( STAR | OPEN_PAREN import_as_names COMMA? CLOSE_PAREN | import_as_names )
  ;
import_as_names : import_as_name ( COMMA import_as_name )* ;
import_as_name : NAME ( AS NAME )? ;
dotted_name : NAME ( DOT NAME )* ;

compound_stmt : if_stmt | while_stmt | for_stmt | with_stmt | funcdef | decorated ;
if_stmt : IF test COLON block elif_clause* else_clause? ;
elif_clause : ELIF test COLON block ;
else_clause : ELSE COLON block ;
while_stmt : WHILE test COLON block else_clause? ;
for_stmt : FOR exprlist IN testlist COLON block else_clause? ;
with_stmt : WITH with_item ( COMMA with_item )* COLON block ;
with_item : test ( AS factor )? ;
decorated : decorator+ funcdef ;
decorator : AT test NEWLINE ;
funcdef : DEF NAME parameters ( ARROW test )? COLON block ;
parameters : OPEN_PAREN ( param ( COMMA param )* COMMA? )? CLOSE_PAREN ;
param : NAME ( COLON test )? ( ASSIGN test )? ;
block : simple_stmts | NEWLINE INDENT ( simple_stmts | compound_stmt )+ DEDENT ;

// ---- Expressions -------------------------------------------------------------------------------
// Binary, boolean, comparison and `not` operators form one left-recursive rule: ANTLR
// parses it with a loop and precedence predicates, so an operand costs a few rule
// invocations instead of one per precedence level. Alternatives are listed from the
// highest precedence to the lowest; binary operators associate to the left, and a
// chain `a < b < c` is flattened into one comparison by the AST builder. The first two
// alternatives are `factor`'s, so that an operand without a sign is `expr` -> `power`.
test : expr ( IF expr ELSE test )? ;
expr
  : power
  | ( ADD | MINUS | NOT_OP ) factor
  | expr ( STAR | DIV | IDIV | MOD | AT ) expr
  | expr ( ADD | MINUS ) expr
  | expr ( LEFT_SHIFT | RIGHT_SHIFT ) expr
  | expr AND_OP expr
  | expr XOR expr
  | expr OR_OP expr
  | expr comp_op expr
  | NOT expr
  | expr AND expr
  | expr OR expr
  ;
comp_op : LESS_THAN | GREATER_THAN | EQUALS | GT_EQ | LT_EQ | NOT_EQ | IN | NOT IN | IS NOT? ;
factor : ( ADD | MINUS | NOT_OP ) factor | power ;
// An atom, its trailers (calls, subscripts, attributes) and an exponent (`**` is
// right-associative through factor).
power
  : ( OPEN_PAREN testlist_comp? CLOSE_PAREN
    | OPEN_BRACK testlist_comp? CLOSE_BRACK
    | OPEN_BRACE dictorsetmaker? CLOSE_BRACE
    | NAME
    | DECIMAL_INTEGER | HEX_INTEGER | OCT_INTEGER | BIN_INTEGER | FLOAT_NUMBER
    | STRING+
    | ELLIPSIS
    | NONE
    | TRUE
    | FALSE
    )
    ( OPEN_PAREN arglist? CLOSE_PAREN | OPEN_BRACK subscriptlist CLOSE_BRACK | DOT NAME )*
    ( POWER factor )?
  ;
testlist_comp : test ( comp_for | ( COMMA test )* COMMA? ) ;
// Dict displays `{k: v, ...}`. Set displays and dict comprehensions parse too, so the
// AST builder can reject them by name.
dictorsetmaker : test ( COLON test )? ( comp_for | ( COMMA test ( COLON test )? )* COMMA? ) ;
subscriptlist : subscript ( COMMA subscript )* COMMA? ;
subscript : test ( COLON test? sliceop? )? | COLON test? sliceop? ;
sliceop : COLON test? ;
// Targets of `for`: names, attributes, subscripts, tuples (checked by the AST builder).
exprlist : factor ( COMMA factor )* COMMA? ;
testlist : test ( COMMA test )* COMMA? ;
arglist : argument ( COMMA argument )* COMMA? ;
argument : NAME ASSIGN test | test comp_for? | STAR test | POWER test ;
// One `for` and at most one `if` are supported; more clauses parse and are rejected.
comp_for : FOR exprlist IN expr comp_iter? ;
comp_iter : comp_for | comp_if ;
comp_if : IF expr comp_iter? ;
