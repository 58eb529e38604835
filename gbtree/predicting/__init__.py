"""The fitted trees as flat arrays, and the walks that predict with them."""
