"""English words a stemmer cannot read: the base form of an irregular inflection (sold → sell,
went → go, children → child) and which words are a verb's past tense (watched, took).

Both come from lemminflect's dictionary (MIT), read once at build time into
`english_forms.json` (1,153 base forms, 6,588 past-tense forms, ~100 KB) by

    python -m chalicelib.domain.english_forms

Loading lemminflect's own dictionaries took 50 ms to import and 130 ms (lemmas) + 90 ms
(inflections) on first use — on a Lambda's first recall of an English query; the file loads in
a few milliseconds, and only when a process first reads an English word (base forms) or a
holiday named in English (past tense). tests/unit/test_textproc.py builds the table again
from lemminflect and checks the file still holds it.

The rules of the build:
- a base form only where the dictionary is sure: a word that is also a base itself ("found",
  "saw", "left", "felt", "people", "data") or whose bases stem apart ("lives": live, life)
  keeps its own form, as does one whose stem already meets its base's ("studied"); verbs and
  nouns only — no adjective is read as another word ("better" is no "good");
- a past tense: a word the dictionary gives as the past tense (VBD) of a verb other than
  itself; a form that is also another word's base ("left", "found") counts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path

FORMS_FILE = Path(__file__).with_name("english_forms.json")
_LEMMA_POS = ("VERB", "NOUN")


@cache
def _table() -> dict[str, object]:
    return json.loads(FORMS_FILE.read_text(encoding="utf-8"))


@cache
def base_forms() -> dict[str, str]:
    """Irregular inflection → its base form, lower case."""
    return dict(_table()["base"])  # type: ignore[arg-type]


@cache
def past_forms() -> frozenset[str]:
    """Every word the dictionary gives as a verb's past tense, lower case."""
    return frozenset(_table()["past"])  # type: ignore[arg-type]


def build(stem: Callable[[str], str]) -> dict[str, object]:
    """The table from lemminflect's dictionary (a dev dependency); `stem`: the tokenizer's
    stemmer, so a base the stemmer already reaches is left out."""
    from lemminflect import getAllInflections
    from lemminflect.core.Lemmatizer import Lemmatizer

    lemmatizer = Lemmatizer()
    lemmatizer.getAllLemmas("a", upos="VERB")  # loads lemma_dict
    words = sorted(w for w in lemmatizer.lemma_dict if w.isalpha() and w.islower() and len(w) >= 3)
    base, past = {}, []
    for word in words:
        entry = {pos: lemmatizer.getAllLemmas(word, upos=pos).get(pos, ()) for pos in _LEMMA_POS}
        bases = {b for pos in _LEMMA_POS for b in entry[pos]}
        stems = {stem(b) for b in bases}
        if bases and word not in bases and len(stems) == 1 and stem(word) not in stems:
            base[word] = min(bases)
        if any(b != word and word in getAllInflections(b, upos="VERB").get("VBD", ())
               for b in entry["VERB"]):
            past.append(word)
    return {"source": "lemminflect", "base": base, "past": past}


def main() -> None:
    import snowballstemmer  # the tokenizer's stemmer (chalicelib.domain.textproc)

    table = build(snowballstemmer.stemmer("english").stemWord)
    FORMS_FILE.write_text(json.dumps(table, ensure_ascii=False, separators=(",", ":")) + "\n",
                          encoding="utf-8")
    print(f"{FORMS_FILE}: {len(table['base'])} base forms, {len(table['past'])} past tenses")


if __name__ == "__main__":
    main()
