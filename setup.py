"""The compiled parts, both optional (without a compiler, or without torch at build time, the
install goes on and the same steps run in Python):
- stridewise.launch._warm, the warm call path in C;
- stridewise.launch._torch, torch tensors keyed and allocated in C++ for it, built against the torch
  importable at build time (pip install --no-build-isolation) and loaded only under that torch.
Everything else is in pyproject.toml."""
from setuptools import Extension, setup


def torch_extension():
    try:
        import torch
        from torch.utils import cpp_extension
    except ImportError:
        return []
    libs = cpp_extension.library_paths()
    return [Extension(
        "stridewise.launch._torch", ["src/stridewise/launch/_torch.cpp"], language="c++", optional=True,
        include_dirs=cpp_extension.include_paths(), library_dirs=libs, runtime_library_dirs=libs,
        libraries=["c10", "torch", "torch_cpu", "torch_python"],
        define_macros=[("SW_TORCH_VERSION", f'"{torch.__version__}"'),
                       ("_GLIBCXX_USE_CXX11_ABI", str(int(torch.compiled_with_cxx11_abi())))],
        extra_compile_args=["-std=c++20", "-O2"])]


setup(ext_modules=[Extension("stridewise.launch._warm", ["src/stridewise/launch/_warm.c"], optional=True),
                   *torch_extension()])
