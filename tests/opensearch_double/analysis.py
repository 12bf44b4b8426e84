"""Built-in analyzers of the double and Lucene's length encoding.

`whitespace`, `keyword` and `simple` behave like OpenSearch's. `standard` is close (Unicode
words lower-cased, each CJK ideograph its own token). `cjk` is an approximation of Lucene's
CJKAnalyzer: NFKC width folding, lower-casing, runs of CJK characters turned into overlapping
bigrams (a lone CJK character stays a unigram), other words kept whole, and Lucene's default
English stop set removed. The real analyzer tokenizes with StandardTokenizer first, so
punctuation inside words and mixed scripts can split differently.
"""

from __future__ import annotations

import re
import unicodedata

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_RUN = re.compile(rf"[{_CJK}]+")
_WORD_OR_CJK = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+(?:['’][^\W_{_CJK}]+)*", re.UNICODE)
_LETTERS = re.compile(r"[^\W\d_]+", re.UNICODE)

# Lucene EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, the default stop set of CJKAnalyzer.
CJK_STOP = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with"]
)


def _bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def whitespace(text: str) -> list[str]:
    return text.split()


def keyword(text: str) -> list[str]:
    return [text]


def simple(text: str) -> list[str]:
    return [t.lower() for t in _LETTERS.findall(text)]


def standard(text: str) -> list[str]:
    out: list[str] = []
    for piece in _WORD_OR_CJK.findall(text):
        if _CJK_RUN.fullmatch(piece):
            out.extend(piece)
        else:
            out.append(piece.lower())
    return out


def cjk(text: str) -> list[str]:
    out: list[str] = []
    for piece in _WORD_OR_CJK.findall(unicodedata.normalize("NFKC", text)):
        if _CJK_RUN.fullmatch(piece):
            out.extend(_bigrams(piece))
        else:
            word = piece.lower()
            if word not in CJK_STOP:
                out.append(word)
    return out


ANALYZERS = {
    "whitespace": whitespace,
    "keyword": keyword,
    "simple": simple,
    "standard": standard,
    "cjk": cjk,
}


# ----------------------------------------------------------- Lucene SmallFloat length norms
# BM25 stores each document's field length in one byte (SmallFloat.intToByte4); scoring
# decodes it again, so long fields are scored with a rounded length, exactly as Lucene does.


def _long_to_int4(i: int) -> int:
    num_bits = i.bit_length()
    if num_bits < 4:
        return i
    shift = num_bits - 4
    encoded = (i >> shift) & 0x07
    return encoded | ((shift + 1) << 3)


def _int4_to_long(i: int) -> int:
    bits = i & 0x07
    shift = (i >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


_NUM_FREE_VALUES = 255 - _long_to_int4(2**31 - 1)


def encode_length(length: int) -> int:
    if length < _NUM_FREE_VALUES:
        return length
    return _NUM_FREE_VALUES + _long_to_int4(length - _NUM_FREE_VALUES)


def decode_length(byte: int) -> int:
    if byte < _NUM_FREE_VALUES:
        return byte
    return _NUM_FREE_VALUES + _int4_to_long(byte - _NUM_FREE_VALUES)


def norm_length(length: int) -> int:
    """The field length BM25 sees after the one-byte round trip."""
    return decode_length(encode_length(length))
