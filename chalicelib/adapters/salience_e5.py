"""`e5`: the salience judge — a logistic model over multilingual-e5-small passage vectors.

Whether a statement left after the small-talk rules (chalicelib.domain.salience) tells
something worth remembering is judged by 384 weights and a bias over its e5 vector, trained
on LoCoMo's annotated facts (`annals bench salience`, bench/README.md "Salience": which
conversations, the leave-two-out figures, how the threshold was chosen) and shipped in
`salience_e5.json`. Deterministic: the same text always gets the same score. The e5 model
is multilingual, so one model judges Chinese and English; the rules decide what is plainly
small talk in both before it is asked.

A hand-written logistic model, not a library: scoring is one dot product, and training
(bench/salience.py) is a few Newton steps in numpy; scikit-learn would be a 30 MB
dependency for that.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from chalicelib.domain.salience import language
from chalicelib.ports import Embedder, Salience, small_talk_vector

WEIGHTS = Path(__file__).with_name("salience_e5.json")
JUDGE_CHARS = 600  # of a turn's statements, judged (about the model's 512-token window)


@lru_cache(maxsize=4)
def load_weights(path: str = str(WEIGHTS)) -> tuple[np.ndarray, float, float]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return np.asarray(data["weights"], np.float32), float(data["bias"]), float(data["threshold"])


class E5SalienceJudge:
    name = "e5"

    def __init__(self, embedder: Embedder | None = None, weights: Path | str = WEIGHTS):
        if embedder is None or embedder.name != "e5-local":
            from chalicelib.adapters.e5 import E5LocalEmbedder

            embedder = E5LocalEmbedder()
        self.embedder = embedder
        self.weights, self.bias, self.threshold = load_weights(str(weights))

    def assess(self, texts: Sequence[str]) -> Salience:
        # The gist is at the start: a 20,000-character reply would otherwise be embedded
        # window by window (seconds) to say little more.
        vectors = self.embedder.embed_passages([t[:JUDGE_CHARS] for t in texts])
        logits = vectors @ self.weights + self.bias if len(texts) else np.zeros(0, np.float32)
        scores = 1.0 / (1.0 + np.exp(-logits.astype(np.float64)))
        return Salience(scores=scores, vectors=vectors, threshold=self.threshold,
                        baselines=self.small_talk_cosines(texts, vectors))

    def small_talk_cosines(self, texts: Sequence[str], vectors: np.ndarray) -> np.ndarray:
        """Each text's cosine to the mean small-talk vector of its language."""
        return np.asarray([float(v @ small_talk_vector(self.embedder, language(t)))
                           for t, v in zip(texts, vectors, strict=True)], np.float32)
