"""Trees grown over rows held elsewhere: in blocks on disk or in shards on Dask workers."""
