"""Training (``centrum train`` and ``train-source``): page records, the learner, the source-only model's training."""
