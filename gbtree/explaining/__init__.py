"""What a fitted model tells of its predictions and trees: SHAP values, inspection, plots."""
