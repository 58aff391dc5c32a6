"""Experiment figures drawn as inline SVG on the server."""
