"""Benchmark modules behind `python -m core bench NAME` (registered in core.eval.BENCHMARKS)."""
