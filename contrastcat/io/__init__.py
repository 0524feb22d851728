"""Files, the lowest layer: outputs written safely (temporary name, then rename), strict JSON, input lines."""
