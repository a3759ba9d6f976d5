"""Farkle: scoring tables, jitted simulation kernels, exact solvers."""
