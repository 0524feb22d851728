"""Writing a run: checkpoints and --resume, shards and merge, torchrun processes."""
