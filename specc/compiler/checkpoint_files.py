"""What a compiled training script writes into a checkpoint beside its model, named once: for the templates that
write and read it (the training and after-training scripts) and for the later stages that read it back.

A run on files saves the preprocessing fitted on its training split (categories, fill values, standardisation
statistics) as preprocessing.json in every checkpoint. Every reader of it (evaluate.py, predict.py, `specc export`,
`best_checkpoint`) bounds it by PREPROCESSING_BYTES: a table of a few hundred thousand categories writes a few MB.
"""

PREPROCESSING = "preprocessing.json"
PREPROCESSING_BYTES = 64 << 20
