"""chalicelib.domain.textproc: the tokenizer every keyword index shares."""

from __future__ import annotations

import pytest

from chalicelib.domain.textproc import (
    _stem,
    base_form,
    index_text,
    is_cjk,
    query_terms,
    search_terms,
    tokenize,
)


class TestTokenize:
    def test_cjk_bigrams_and_stemmed_word(self):
        assert tokenize("奶糖体检 Running") == ["奶糖", "糖体", "体检", "run"]

    def test_docstring_examples(self):
        assert tokenize("奶糖昨天进行了体检") == [
            "奶糖", "糖昨", "昨天", "天进", "进行", "行了", "了体", "体检"]
        assert tokenize("Melanie painted a sunrise") == ["melani", "paint", "a", "sunris"]

    def test_single_cjk_character_is_its_own_token(self):
        assert tokenize("猫") == ["猫"]
        assert tokenize("猫 and 狗") == ["猫", "and", "狗"]

    def test_punctuation_breaks_cjk_runs(self):
        # no bigram spans the comma: "糖，体" must not become "糖体"
        assert tokenize("奶糖，体检") == ["奶糖", "体检"]

    def test_mixed_script_without_spaces(self):
        assert tokenize("我在Starbucks喝咖啡") == ["我在", "starbuck", "喝咖", "咖啡"]

    def test_japanese_and_korean_are_bigrammed(self):
        assert tokenize("世界です") == ["世界", "界で", "です"]
        assert tokenize("한국어") == ["한국", "국어"]

    def test_possessive_and_curly_apostrophe(self):
        assert tokenize("Mel’s paintings") == ["mel", "paint"]
        assert tokenize("Mel's paintings") == ["mel", "paint"]

    def test_underscore_and_digits(self):
        assert tokenize("running_dogs 2026") == ["run", "dog", "2026"]

    def test_non_ascii_latin_is_lowercased_not_stemmed(self):
        assert tokenize("Café Résumé") == ["café", "résumé"]

    @pytest.mark.parametrize("text", ["", "   ", "!!! ，。？", "—"])
    def test_no_tokens_in_punctuation(self, text):
        assert tokenize(text) == []

    def test_index_text_is_space_joined_tokens(self):
        assert index_text("奶糖体检 Running") == "奶糖 糖体 体检 run"


class TestQueryTerms:
    def test_english_stop_words_dropped_and_stemmed(self):
        assert query_terms("What did I tell you about the trip?") == ["trip"]
        assert query_terms("Mel painted sunrises") == ["mel", "paint", "sunris"]

    def test_a_word_holding_a_particle_character_is_still_content(self):
        # 他 / 吧 / 了 are particles in 他说 / 好吧 / 去了, but name a thing in 吉他 / 酒吧 / 了解
        assert "吉他" in query_terms("吉他课在哪里上？")
        assert "酒吧" in query_terms("我们去酒吧了吗")
        assert not {"他说", "好吧"} & set(query_terms("他说好吧"))

    def test_distinct_in_order(self):
        assert query_terms("dogs dog DOG cats") == ["dog", "cat"]

    def test_grammar_bigrams_dropped_content_kept(self):
        terms = query_terms("我们的奶糖")
        assert "奶糖" in terms
        assert "我们" not in terms and "们的" not in terms
        assert query_terms("我们的") == []
        assert query_terms("是不是") == []

    def test_query_terms_are_a_subset_of_the_indexed_tokens(self):
        # a query term that the index never produced could never match anything
        text = "还记得奶糖上周去体检的事吗 Mel painted sunrises"
        assert set(query_terms(text)) <= set(tokenize(text))
        assert {"奶糖", "体检", "paint"} <= set(query_terms(text))

    def test_single_letters_dropped_digits_kept(self):
        assert query_terms("x 7 y 42") == ["7", "42"]


class TestIsCjk:
    @pytest.mark.parametrize(("text", "expected"), [
        ("奶糖去体检了", True),
        ("Mel adopted a puppy", False),
        ("我在Starbucks喝咖啡", True),  # 4 of 13 letters are Han: above the 20 % share
        ("I love 猫猫", True),  # 2 of 7 letters
        ("I love 猫", False),  # 1 of 6 letters: below the share
        ("Visiting Shanghai next week 上海", False),  # 2 of 26 letters
        ("", False),
        ("12345 !!", False),
    ])
    def test_share_of_cjk_letters(self, text, expected):
        assert is_cjk(text) is expected


class TestBaseForms:
    """An irregular English form is stemmed from its base (lemminflect's dictionary)."""

    @pytest.mark.parametrize(("asked", "told"), [
        ("What did Jess sell last Saturday?", "Jess sold Rusty at the market"),
        ("What did Nora buy?", "Nora bought a used bike"),
        ("Where did they go?", "they went to Leeds"),
        ("Who did Sam meet at the gym?", "Sam met Theo at the gym"),
        ("How many children does Anna have?", "Anna's child started school"),
    ])
    def test_question_and_statement_share_the_verb(self, asked, told):
        assert set(query_terms(asked)) - {"jess", "nora", "sam", "anna", "gym", "last",
                                          "saturday", "mani", "theo"} <= set(tokenize(told))

    @pytest.mark.parametrize("word", ["found", "saw", "left", "felt", "lives", "data"])
    def test_a_word_that_is_a_base_itself_or_of_two_stems_stays(self, word):
        assert tokenize(word) == [_stem(word)]

    def test_regular_forms_and_other_scripts_are_as_before(self):
        assert tokenize("studied walked 奶糖 Zoë") == ["studi", "walk", "奶糖", "zoë"]
        assert base_form("better") == "better"  # no adjective is read as another word

    def test_search_terms_keep_the_written_stem_for_older_indexes(self):
        assert search_terms("who sold the bike?") == ["sell", "bike", "sold"]
        assert search_terms("what did Jess sell?") == ["jess", "sell"]


def test_an_index_written_with_the_written_stem_still_answers(tmp_path):
    """A memory indexed before base forms were read holds "sold", not "sell": a question
    that says "sold" still finds it, and one that says "sell" finds what is indexed now."""
    from chalicelib.adapters.sqlite.db import SQLiteDB
    from chalicelib.adapters.sqlite.index import FtsKeywordIndex
    from chalicelib.domain.models import IndexDoc

    index = FtsKeywordIndex(SQLiteDB(tmp_path / "kw.db"))
    index.upsert([IndexDoc(id="event:new", space="s", kind="event", text="Jess sold Rusty",
                           start=0, end=1)])
    with index.db.tx() as con:  # a row as the tokenizer before base forms wrote it
        index.write_rows(con, [("s", "event:old", "event", 0.0, 1.0, "active",
                                "jess sold the bike")])
    index.catch_up()
    assert {h.id for h in index.keyword_search("s", "Who sold something?", 5)} == \
        {"event:new", "event:old"}
    first, *_ = index.keyword_search("s", "What did Jess sell?", 5)
    assert first.id == "event:new"


def test_the_shipped_english_forms_are_what_lemminflect_gives():
    """english_forms.json is built from lemminflect's dictionary (python -m
    chalicelib.domain.english_forms): built again, it is the same table."""
    import json

    from chalicelib.domain import english_forms

    shipped = json.loads(english_forms.FORMS_FILE.read_text(encoding="utf-8"))
    assert english_forms.build(_stem) == shipped
    assert shipped["base"]["sold"] == "sell" and "watched" in shipped["past"]
