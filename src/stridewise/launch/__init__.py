"""Launch: the pipeline driver from arguments to a launched kernel, and the warm path in Python, C and C++."""
