"""The one compiled part: stridewise._warm, the warm call path in C (optional: without a C
compiler the install goes on, and the same path runs in Python). Everything else is in
pyproject.toml."""
from setuptools import Extension, setup

setup(ext_modules=[Extension("stridewise._warm", ["src/stridewise/_warm.c"], optional=True)])
