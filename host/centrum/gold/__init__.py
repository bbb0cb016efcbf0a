"""The shared data sets and their gold: the loader, site grouping for cross-validation, tokens and scores against
gold (used by evaluation, training, campaigns and the corpus)."""
