"""Searching memories told in the other language: the query's vector moved across.

multilingual-e5 gives every sentence a language part: an English question is nearer every
English sentence than the Chinese memory that answers it, and among Chinese memories its
cosines run flat ("Am I still tutoring?" against 家教: all about 0.84), so meaning ranks them
by little. Moving the query from its language's mean to the other's (the means of the same
sentences in both, chalicelib.domain.parallel; the embedder's `language_means`) takes most of
that part out (bench/README.md, "Across languages").

Recall then searches with both vectors and keeps each memory's score from the one in its own
language, on the query's own scale (`merge_across`): a cross-language cosine moved by the
offset between the languages' passage means, so a Chinese memory does not outrank an English
one merely because Chinese cosines run higher. Which language a hit is in needs no lookup:
a memory the moved vector scores higher than the query's own is in the other language.

Only for an embedder that has the means (e5): the others have no shared space to move in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chalicelib.domain.parallel import LANGUAGES
from chalicelib.domain.salience import language
from chalicelib.domain.textproc import is_cjk, query_terms, tokenize
from chalicelib.ports import Embedder, Glossary, Hit


@dataclass(frozen=True)
class Across:
    """A query's vector moved into the other language: the unit vector searched, the length
    of the move before normalising (`norm`), what a cosine to it is lowered by to stand on the
    query's own scale (`offset`), and where along the move's direction the two languages'
    passages part (`parting`)."""

    vector: np.ndarray
    norm: float
    offset: float
    parting: float

    def along(self, own: float, moved: float) -> float:
        """A passage's projection on the move's direction, from its cosines to the query's
        own vector and to the moved one: moved·norm − own (the move is v + d)."""
        return moved * self.norm - own

    def foreign(self, own: float, moved: float) -> bool:
        """A passage lying past `parting` along the move: told in the other language."""
        return self.along(own, moved) > self.parting


def _floor(hits: Sequence[Hit], k: int) -> float:
    """The most a passage a list of k hits lacks can score: its last hit's (−1, not cut)."""
    return hits[-1].score if len(hits) >= k else -1.0


def across(embedder: Embedder, text: str, vector: np.ndarray) -> Across | None:
    """`vector` (the query `text`'s) moved into the other language, or None when the embedder
    has no language means."""
    means_of = getattr(embedder, "language_means", None)
    if means_of is None:
        return None
    means = means_of()
    own = language(text)
    other = next(lang for lang in LANGUAGES if lang != own)
    direction = means.query[other] - means.query[own]
    moved = vector + direction
    norm = max(float(np.linalg.norm(moved)), 1e-12)
    moved = (moved / norm).astype(np.float32)
    offset = float(moved @ means.passage[other]) - float(vector @ means.passage[own])
    parting = float((means.passage[own] + means.passage[other]) @ direction) / 2
    return Across(vector=moved, norm=norm, offset=offset, parting=parting)


def merge_across(own: Sequence[Hit], moved: Sequence[Hit], shift: Across, k: int) -> list[Hit]:
    """One vector hit list from the query's own (`own`) and its moved vector's (`moved`),
    best first, at most `k`. A hit lying past `shift.parting` along the move is in the other
    language: its score is its cosine to the moved vector less the offset; every other hit
    keeps its own cosine. A hit in one list only is placed by the most the other list's
    last hit allows, and left out when that cannot tell (a moved hit of the own language,
    which the own list ranked below its k: the query's own search already judged it)."""
    own_scores = {h.id: h.score for h in own}
    moved_scores = {h.id: h.score for h in moved}
    own_floor, moved_floor = _floor(own, k), _floor(moved, k)
    scores = {}
    for id_, score in own_scores.items():
        lifted = moved_scores.get(id_, moved_floor)  # at most the moved list's last
        if id_ in moved_scores and shift.foreign(score, lifted):
            scores[id_] = lifted - shift.offset
        else:
            scores[id_] = score
    for id_, score in moved_scores.items():
        if id_ not in own_scores and shift.foreign(own_floor, score):
            scores[id_] = score - shift.offset  # its own cosine is at most own_floor
    ranked = sorted(scores.items(), key=lambda item: -item[1])[:k]
    return [Hit(id=i, score=s) for i, s in ranked]


def holds_other_language(own: Sequence[Hit], moved: Sequence[Hit], shift: Across,
                         k: int) -> bool:
    """Whether the moved vector's hits hold a memory in the other language (one lying past
    `shift.parting`, as `merge_across` reads it): a space told in one language only needs no
    search in the other's words — nor the dictionary read for them."""
    own_scores = {h.id: h.score for h in own}
    own_floor = _floor(own, k)
    return any(shift.foreign(own_scores.get(h.id, own_floor), h.score) for h in moved)


# the longest Chinese word a dictionary lookup tries (CC-CEDICT headwords the glossary keeps)
_LONGEST_WORD = 4
_HAN_RUN = re.compile(r"[\u4e00-\u9fff]+")
_PARTING = frozenset("了过的着")  # what parts a separable verb: 纹的身, 露过营, 洗了澡


def chinese_words(text: str, glossary: Glossary) -> list[str]:
    """The Chinese words of `text` the glossary knows, longest first from the left in each
    run of Han characters (forward maximum matching; 博物馆 is one word, not 博物 and 物馆 as
    the keyword index's bigrams cut it). Single characters are left out: most are particles
    or parts of words ("什么", "的")."""
    words: list[str] = []
    for run in _HAN_RUN.findall(text):
        at = 0
        while at < len(run) - 1:
            for size in range(min(_LONGEST_WORD, len(run) - at), 1, -1):
                if glossary.in_english(word := run[at:at + size]):
                    if query_terms(word):  # not a question word (什么, 时候, 哪些)
                        words.append(word)
                    at += size
                    break
            else:
                # a verb and its object parted by an aspect particle (纹的身, 露过营, 见了面)
                split = run[at] + run[at + 2] if at + 2 < len(run) else ""
                if run[at + 1] in _PARTING and glossary.in_english(split):
                    words.append(split)
                    at += 3
                else:
                    at += 1
    return words


def in_other_words(query: str, glossary: Glossary, limit: int = 64) -> str:
    """The query's content as the other language's words, for a keyword search of the
    memories told in it: a Chinese question's words as English terms ("Melanie 什么时候去的
    博物馆？" → museum …), an English question's terms as Chinese words ("What is the name
    of 林悦's daughter?" → 女儿 闺女 …). Question words are none of its words (什么, 时候:
    `chinese_words`; what, when: stop words); the names stay out (the caller strips them),
    and so do a Chinese question's Latin words ("LGBTQ": its own keyword search has them).
    At most `limit` words: a term can have dozens ("name" is 名字, 名称, 姓名 …)."""
    if language(query) == "zh":
        # a term searched as text is stemmed again: the few stems that would change ("decis")
        # are left out
        found = [t for w in chinese_words(query, glossary) for t in sorted(glossary.in_english(w))
                 if tokenize(t) == [t]]
    else:
        found = [w for t in query_terms(query) if not is_cjk(t)
                 for w in sorted(glossary.in_chinese(t))]
    return " ".join(list(dict.fromkeys(found))[:limit])  # a pasted page: its first words
