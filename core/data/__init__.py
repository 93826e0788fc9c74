"""Loaders for the benchmarks in ../shared/data: any file of that format, by path."""
