"""One forward and backward pass that records what every method reads, the extra passes some need, LRP rules."""
