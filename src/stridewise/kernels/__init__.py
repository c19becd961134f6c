"""User kernels: ElementwiseKernel in CuPy's and PyCUDA's forms, and fuse/evaluate."""
