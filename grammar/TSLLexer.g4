// The TSL lexer: raw tokens of Python-syntax source. It does no layout work: the
// token pass in frontend/lexer.cpp turns NEWLINE/WS/COMMENT/LINE_JOIN into logical
// NEWLINE, INDENT and DEDENT tokens and reports the *_ERROR tokens as syntax errors.
// The input has already had its BOM removed and its line ends turned into '\n'.
lexer grammar TSLLexer;

tokens { INDENT, DEDENT }

// ---- Keywords (before NAME: on a tie the first rule wins) ----------------------------------
FALSE : 'False' ;
NONE : 'None' ;
TRUE : 'True' ;
AND : 'and' ;
AS : 'as' ;
ASSERT : 'assert' ;
BREAK : 'break' ;
CONTINUE : 'continue' ;
DEF : 'def' ;
ELIF : 'elif' ;
ELSE : 'else' ;
FOR : 'for' ;
FROM : 'from' ;
IF : 'if' ;
IMPORT : 'import' ;
IN : 'in' ;
IS : 'is' ;
NOT : 'not' ;
OR : 'or' ;
PASS : 'pass' ;
RAISE : 'raise' ;
RETURN : 'return' ;
WHILE : 'while' ;
WITH : 'with' ;
// Python keywords that TSL rejects; the parser names them in its error message.
ASYNC : 'async' ;
AWAIT : 'await' ;
CLASS : 'class' ;
DEL : 'del' ;
EXCEPT : 'except' ;
FINALLY : 'finally' ;
GLOBAL : 'global' ;
LAMBDA : 'lambda' ;
NONLOCAL : 'nonlocal' ;
TRY : 'try' ;
YIELD : 'yield' ;

// ---- Literals --------------------------------------------------------------------------------
// Prefixes and escapes are checked and decoded by the parser (frontend/parser.cpp).
STRING : STRING_PREFIX? ( SHORT_STRING | LONG_STRING ) ;
// A long string that reaches the end of the input: "unterminated triple-quoted string".
UNTERMINATED_LONG_STRING
  : STRING_PREFIX? '\'\'\'' ( SQ_ITEM | '\'' SQ_ITEM | '\'\'' SQ_ITEM )* ( '\'' | '\'\'' | '\\' )? EOF
  | STRING_PREFIX? '"""' ( DQ_ITEM | '"' DQ_ITEM | '""' DQ_ITEM )* ( '"' | '""' | '\\' )? EOF
  ;
// A short string cut by the end of the line: always shorter than the terminated STRING.
UNTERMINATED_STRING
  : STRING_PREFIX? ( '\'' ( '\\' . | ~[\\\n'] )* | '"' ( '\\' . | ~[\\\n"] )* ) ;

FLOAT_NUMBER : POINT_FLOAT | EXPONENT_FLOAT ;
DECIMAL_INTEGER : [1-9] ( '_'? [0-9] )* | '0' ( '_'? '0' )* ;
HEX_INTEGER : '0' [xX] ( '_'? [0-9a-fA-F] )+ ;
OCT_INTEGER : '0' [oO] ( '_'? [0-7] )+ ;
BIN_INTEGER : '0' [bB] ( '_'? [01] )+ ;
// Anything else that starts like a number and runs on (1abc, 012, 0b102, 1_, 1.0j):
// longer than any valid number it starts with, so it wins and becomes an error.
INVALID_NUMBER
  : [0-9] [0-9a-zA-Z_]* ( '.' [0-9a-zA-Z_]* )?
  | '.' [0-9] [0-9a-zA-Z_]*
  ;

NAME : ID_START ID_CONTINUE* ;

// ---- Operators and delimiters ----------------------------------------------------------------
ELLIPSIS : '...' ;
DOT : '.' ;
STAR : '*' ;
OPEN_PAREN : '(' ;
CLOSE_PAREN : ')' ;
COMMA : ',' ;
COLON : ':' ;
SEMI : ';' ;
POWER : '**' ;
ASSIGN : '=' ;
OPEN_BRACK : '[' ;
CLOSE_BRACK : ']' ;
OR_OP : '|' ;
XOR : '^' ;
AND_OP : '&' ;
LEFT_SHIFT : '<<' ;
RIGHT_SHIFT : '>>' ;
ADD : '+' ;
MINUS : '-' ;
DIV : '/' ;
MOD : '%' ;
IDIV : '//' ;
NOT_OP : '~' ;
OPEN_BRACE : '{' ;
CLOSE_BRACE : '}' ;
LESS_THAN : '<' ;
GREATER_THAN : '>' ;
EQUALS : '==' ;
GT_EQ : '>=' ;
LT_EQ : '<=' ;
NOT_EQ : '!=' ;
AT : '@' ;
ARROW : '->' ;
WALRUS : ':=' ;
ADD_ASSIGN : '+=' ;
SUB_ASSIGN : '-=' ;
MULT_ASSIGN : '*=' ;
AT_ASSIGN : '@=' ;
DIV_ASSIGN : '/=' ;
MOD_ASSIGN : '%=' ;
AND_ASSIGN : '&=' ;
OR_ASSIGN : '|=' ;
XOR_ASSIGN : '^=' ;
LEFT_SHIFT_ASSIGN : '<<=' ;
RIGHT_SHIFT_ASSIGN : '>>=' ;
POWER_ASSIGN : '**=' ;
IDIV_ASSIGN : '//=' ;

// ---- Layout (consumed by the token pass, never seen by the parser) ---------------------------
NEWLINE : '\n' ;
WS : [ \t\f]+ ;
COMMENT : '#' ~'\n'* ;
LINE_JOIN : '\\' '\n' ;
// A backslash not followed by a line end.
BACKSLASH : '\\' ;
// Any other character: "invalid character".
ERROR_CHAR : . ;

fragment STRING_PREFIX : [rRuUbBfF] | [fF] [rR] | [rR] [fF] | [bB] [rR] | [rR] [bB] ;
fragment SHORT_STRING
  : '\'' ( '\\' . | ~[\\\n'] )* '\''
  | '"' ( '\\' . | ~[\\\n"] )* '"'
  ;
fragment LONG_STRING
  : '\'\'\'' ( '\\' . | ~'\\' )*? '\'\'\''
  | '"""' ( '\\' . | ~'\\' )*? '"""'
  ;
// One character of a long string that is not its quote (so no closing triple quote).
fragment SQ_ITEM : '\\' . | ~['\\] ;
fragment DQ_ITEM : '\\' . | ~["\\] ;
fragment POINT_FLOAT : DIGIT_PART? '.' DIGIT_PART | DIGIT_PART '.' ;
fragment EXPONENT_FLOAT : ( DIGIT_PART | POINT_FLOAT ) [eE] [+-]? DIGIT_PART ;
fragment DIGIT_PART : [0-9] ( '_'? [0-9] )* ;
fragment ID_START : [_\p{ID_Start}] ;
fragment ID_CONTINUE : [\p{ID_Continue}] ;
