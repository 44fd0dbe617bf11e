// Placeholder lexer; the full grammar replaces it.
lexer grammar TSLLexer;
tokens { INDENT, DEDENT }
NAME : [a-zA-Z_] [a-zA-Z_0-9]* ;
NEWLINE : '\r'? '\n' ;
WS : [ \t]+ -> skip ;
