"""Integrations with torch (custom ops, gradients) and Dask."""
