"""Benchmarks: `annals bench …`. Measurements, not tests."""
