// Placeholder parser; the full grammar replaces it.
parser grammar TSLParser;
options { tokenVocab = TSLLexer; }
file_input : (NAME | NEWLINE)* EOF ;
