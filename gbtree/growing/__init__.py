"""The growers: one tree from the gradients, picked by ``growers.make_grower``."""
