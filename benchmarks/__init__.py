"""Benchmarks: accuracy on reference data and speed; `python -m benchmarks.run_all`."""
