"""PTX text: lexer, parser and printer."""
