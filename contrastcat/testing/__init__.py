"""Tiny classifiers trained on a planted-keyword task, for tests and demos (not the user-facing zoo)."""
