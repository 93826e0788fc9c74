"""Benchmarks behind `python -m core bench NAME`: one module each (registered in
core.benchmarks.runner.BENCHMARKS), and the runner they share: runner (context, summary, registry),
shards (`--shard K/N`), merge (`bench-merge`), ray_runner (`--ray`) and request (a run as the
command line and the pages start it)."""
