"""Built-in ops: the op table (remainder is a row) and complex dtypes' rules."""
