"""Engine tests: dispatch."""
