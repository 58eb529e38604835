"""Model files (save_model, load_model) and exports (ONNX, Treelite)."""
