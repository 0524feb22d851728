"""The deletion test: perturb the ranked tokens, predict, and score a map by the drop (refinement uses it)."""
