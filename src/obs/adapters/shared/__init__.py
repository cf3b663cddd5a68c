"""Code the input formats share, one module a job (no format is imported here, and none of these imports a
format): run ids, loosely written values, Trainer/TRL conventions, log records to metrics, JSON documents, text
files, hparams.yaml, probe cases and their collector."""
