"""Input: checks, binning, the weighted quantile sketch, categorical columns, query groups, ExternalData."""
