"""The release, in one place below every layer (libraries, reports and checkpoints record it)."""

__version__ = "0.7.0"
