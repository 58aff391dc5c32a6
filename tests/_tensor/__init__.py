"""Engine tests: _tensor."""
