"""gbtree's benchmarks: ``python -m benchmarks WORKLOAD`` (see README.md)."""
