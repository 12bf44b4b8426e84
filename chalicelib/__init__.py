"""Annals: long-term memory for AI chat."""

__version__ = "0.1.0"
