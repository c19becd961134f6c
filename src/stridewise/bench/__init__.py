"""Bench: stridewise against what users would otherwise run (`stridewise bench`)."""
