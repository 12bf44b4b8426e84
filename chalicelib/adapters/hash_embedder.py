"""`hash`: a deterministic bag-of-tokens embedder for fast tests.

It hashes the shared tokenizer's tokens into a fixed number of buckets, so texts that share
words are close and others are not. It has no notion of meaning; never use it for real recall.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from chalicelib.domain.textproc import tokenize


class HashEmbedder:
    name = "hash"

    def __init__(self, dim: int = 256):
        self.dim = dim

    def _one(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, np.float32)
        for token in tokenize(text):
            digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dim
            sign = 1.0 if digest[4] & 1 else -1.0
            vec[bucket] += sign
        norm = float(np.linalg.norm(vec))
        if norm == 0:
            vec[0] = 1.0
            return vec
        return vec / norm

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.vstack([self._one(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._one(text)
