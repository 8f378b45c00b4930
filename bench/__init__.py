"""Benchmarks and the fault harness they share with the tests (``bench/faults.py``)."""
