"""Operands: every argument becomes a strided view or a host scalar, with its dtype, promotion and the output's layout, by the rules of the library that owns it."""
