"""The boosting loop of an in-memory fit, its losses, metrics and callbacks."""
