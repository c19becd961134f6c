"""Codegen: the C++ translation unit of one kernel variant, and the hoisting of broadcast-invariant subexpressions."""
