"""The admission gate (chalicelib/usecases/recall/gate.py): relevance = (cosine to the query
− the query's cosine to small talk) + term_weight × coverage; a hook-sized recall shows only
cards that reach the threshold, a wider one those above a lower floor, and the trace names
the threshold and the margin. A stub embedder with three
axes (cats, music, small talk) makes every cosine known in advance."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import ClassVar

import numpy as np
import pytest

from chalicelib.domain.models import Card, MessageIn, PutMessagesRequest, RecallRequest
from chalicelib.usecases import ingest
from chalicelib.usecases.recall import gate_threshold, recall
from chalicelib.usecases.recall.gate import (
    SMALL_TALK,
    Gate,
    coverage,
    relevance,
    small_talk_vector,
    unit_share,
)
from chalicelib.usecases.recall.recipes import BM25_ONLY, HYBRID, RecallRecipe
from tests.conftest import make_services
from tests.unit.conftest import T0

SPACE = "sp"
ALL_SMALL_TALK = {line for lines in SMALL_TALK.values() for line in lines}


class StubEmbedder:
    """Cats → axis 0, music → axis 1, small talk → axis 2; a query mixes what it mentions."""

    name = "stub"
    dim = 3

    def __init__(self):
        self.passage_calls = 0

    def _vec(self, text: str) -> np.ndarray:
        low = text.lower()
        vec = np.array([float(any(w in low for w in ("cat", "奶糖", "vet"))),
                        float(any(w in low for w in ("cello", "guitar", "music"))),
                        float(text in ALL_SMALL_TALK or "weather" in low)], np.float32)
        if not vec.any():
            vec[2] = 1.0
        return vec / np.linalg.norm(vec)

    def embed_passages(self, texts):
        self.passage_calls += 1
        return np.vstack([self._vec(t) for t in texts]) if texts else np.zeros((0, 3))

    def embed_query(self, text):
        return self._vec(text)


def card(text: str, *, vector: float | None = None, title: str = "t") -> Card:
    parts = {} if vector is None else {"vector": vector}
    return Card(ref=f"event:{abs(hash(text))}", kind="event", title=title, text=text,
                score=1.0, score_parts=parts)


def gate(terms, *, baseline=0.80, bound=None, threshold=0.09, weight=0.08) -> Gate:
    return Gate(threshold=threshold, term_weight=weight, terms=list(terms),
                baselines={"en": baseline, "zh": baseline},
                bound=bound)


# ------------------------------------------------------------------ the rule


def test_relevance_is_lift_plus_weighted_coverage():
    assert relevance(0.05, 0.5, 0.08) == pytest.approx(0.09)
    assert relevance(-0.01, 1.0, 0.1) == pytest.approx(0.09)
    assert relevance(0.2, 0.0, 0.08) == pytest.approx(0.2)


def test_a_chinese_card_is_judged_on_the_characters_it_holds():
    """"我现在养了几只猫 都叫什么": its bigrams (几只, 只猫, 都叫 …) straddle words and "我养的
    黑猫 三岁了" holds none of them; by characters it holds 猫 of the question's content. With
    `by_characters` a hook-sized gate reads that, at the threshold plus the margin; a card in
    another language keeps its coverage and the threshold (issue 36, companion chats)."""
    from chalicelib.domain.textproc import query_terms

    terms = query_terms("我现在养了几只猫 都叫什么")
    black_cat = card("我养的黑猫 三岁了 超黏人", vector=0.887)
    assert coverage(terms, black_cat) == 0.0
    assert unit_share(terms, black_cat) == pytest.approx(1 / 5)  # 猫 of 几 只 猫 都 叫
    plain = Gate(threshold=0.09, term_weight=0.08, terms=terms, baselines={"zh": 0.80, "en": 0.80},
                 bound=None, lang="zh")
    assert not plain.judge(black_cat).admitted  # 0.087 of meaning, no bigram held
    chars = Gate(threshold=0.09, term_weight=0.08, terms=terms, baselines={"zh": 0.80, "en": 0.80},
                 bound=None, lang="zh")
    chars.by_characters(0.01)
    judged = chars.judge(black_cat)
    assert judged.admitted and judged.relevance == pytest.approx(0.087 + 0.08 / 5)
    english = card("I have a black cat called Coal", vector=0.887)
    assert chars.judge(english).coverage == plain.judge(english).coverage
    en_gate = gate(["cat"])
    en_gate.by_characters(0.01)  # an English query: nothing changes
    assert en_gate.units_margin is None


def test_coverage_counts_the_query_terms_a_card_holds():
    c = card("Melanie painted a sunrise by the lake", title="Melanie painted")
    assert coverage(["paint", "sunris"], c) == 1.0
    assert coverage(["paint", "pottery"], c) == 0.5
    assert coverage([], c) == 0.0
    assert coverage(["体检"], card("奶糖昨天进行了体检")) == 1.0


@pytest.mark.parametrize(("cosine", "terms_held", "admitted"), [
    (0.95, 0, True),    # lift 0.15 on meaning alone
    (0.88, 0, False),   # lift 0.08: close, but chatter-level meaning is not enough
    (0.84, 2, True),    # lift 0.04 + 0.08 × 1.0
    (0.84, 1, False),   # lift 0.04 + 0.08 × 0.5 = 0.08
    (0.70, 2, False),   # every term, but further from the query than small talk is
])
def test_judge_combines_meaning_and_terms(cosine, terms_held, admitted):
    text = " ".join(["cello", "lesson"][:terms_held]) or "something else"
    judged = gate(["cello", "lesson"]).judge(card(text, vector=cosine))
    assert judged.admitted is admitted
    assert judged.relevance == pytest.approx(cosine - 0.80 + 0.08 * terms_held / 2)


def test_a_card_outside_the_vector_list_gets_its_lowest_cosine():
    g = gate(["cello"], bound=0.83)
    judged = g.judge(card("cello"))  # no vector part: at most the list's lowest
    assert judged.relevance == pytest.approx(0.83 - 0.80 + 0.08)
    assert judged.admitted


def test_without_any_meaning_evidence_every_term_is_required():
    g = gate(["cello", "lesson"], bound=None)  # the vector list was not full: not embedded
    assert g.judge(card("cello lesson today")).admitted
    assert g.judge(card("cello lesson today")).relevance is None
    assert not g.judge(card("cello practice")).admitted
    assert not gate([], bound=None).judge(card("anything")).admitted


def test_admit_keeps_the_order_and_records_the_evidence():
    g = gate(["cello"])
    first, dropped, second = card("cello", vector=0.9), card("x", vector=0.8), card("y", vector=0.95)
    out = g.admit([first, dropped, second])
    assert [c.ref for c in out] == [first.ref, second.ref]
    assert out[0].score_parts == {"vector": 0.9, "coverage": 1.0,
                                  "relevance": pytest.approx(0.9 - 0.8 + 0.08)}
    assert first.score_parts == {"vector": 0.9}  # the input card is not changed


def test_threshold_hook_sized_by_default_a_floor_above_explicit_anywhere_zero_off():
    def threshold(recipe=HYBRID, limit=2, **kw):
        found = gate_threshold(RecallRequest(query="q", **kw), recipe, limit)
        return found.value, found.scope

    assert threshold() == (HYBRID.min_relevance, "hook") and HYBRID.min_relevance > 0
    assert threshold(limit=1, max_cards=1) == (HYBRID.min_relevance, "hook")
    assert threshold(limit=3, max_cards=3) == (HYBRID.min_relevance_wide, "wide")
    assert 0 < HYBRID.min_relevance_wide < HYBRID.min_relevance  # a lower floor, never off
    assert threshold(limit=20, min_relevance=0.05) == (0.05, "request")
    assert threshold(min_relevance=0) == (0.0, "request")
    assert threshold(limit=20, min_relevance=0) == (0.0, "request")
    assert threshold(BM25_ONLY) == (0.0, "hook")  # baselines: off at every size
    assert threshold(BM25_ONLY, 20) == (0.0, "wide")
    off = RecallRecipe(name="x", min_relevance=0.0)  # ANNALS_MIN_RELEVANCE=0: off everywhere
    assert threshold(off, 20) == (0.0, "wide")
    low = RecallRecipe(name="x", min_relevance=0.02)  # the floor never exceeds the threshold
    assert threshold(low, 20) == (0.02, "wide")


def test_small_talk_is_in_the_query_language_and_embedded_once():
    stub = StubEmbedder()
    en = small_talk_vector(stub, "en")
    assert small_talk_vector(stub, "en") is en and stub.passage_calls == 1
    small_talk_vector(stub, "zh")
    assert stub.passage_calls == 2
    g = Gate.for_query(stub, "我的吉他课怎么样了", stub.embed_query("吉他课"), set(), [0.5] * 40,
                       40, 0.09, 0.08)
    assert g.baseline == pytest.approx(1.0)  # stub: unknown words are small talk
    g = Gate.for_query(stub, "How is Sam's cat?", stub.embed_query("How is cat?"), {"Sam"},
                       [0.9, 0.5], 40, 0.09, 0.08)
    assert g.terms == ["cat"] and g.bound is None  # names are not content; list not full



class ShippedSmallTalk(StubEmbedder):
    """A stub that ships its English small talk, as the e5 adapter ships both languages."""

    def small_talk_means(self):
        return {"en": np.array([0.0, 0.0, 1.0], np.float32)}


def test_shipped_small_talk_is_not_embedded_again():
    stub = ShippedSmallTalk()
    assert small_talk_vector(stub, "en").tolist() == [0.0, 0.0, 1.0]
    assert stub.passage_calls == 0
    small_talk_vector(stub, "zh")  # not shipped: embedded, once
    small_talk_vector(stub, "zh")
    assert stub.passage_calls == 1


def test_the_shipped_small_talk_follows_the_phrases(tmp_path):
    """A language whose phrases changed since the file was built is embedded again."""
    from chalicelib.adapters.e5 import SMALL_TALK_MEANS, load_small_talk

    data = json.loads(SMALL_TALK_MEANS.read_text(encoding="utf-8"))
    assert set(load_small_talk()) == set(SMALL_TALK) == set(data["texts"])
    data["texts"]["zh"] = [*data["texts"]["zh"], "拜拜"]
    stale = tmp_path / "small_talk.json"
    stale.write_text(json.dumps(data), encoding="utf-8")
    assert set(load_small_talk(str(stale))) == {"en"}


@pytest.mark.e5
def test_the_shipped_small_talk_is_the_models(e5_embedder):
    """e5_small_talk.json must be rebuilt (python -m chalicelib.adapters.e5_small_talk) when
    SMALL_TALK or the model changes. Bit for bit on the machine that built it; the engine's
    float sums differ a little between CPUs, so elsewhere the same direction and length."""
    from chalicelib.adapters.e5 import load_small_talk
    from chalicelib.adapters.e5_small_talk import embed_small_talk

    shipped, fresh = load_small_talk(), embed_small_talk(e5_embedder)
    for lang in SMALL_TALK:
        mine, theirs = shipped[lang], fresh[lang]
        cosine = float(np.dot(mine, theirs) / np.linalg.norm(mine) / np.linalg.norm(theirs))
        assert cosine > 0.99995
        assert np.linalg.norm(mine) == pytest.approx(np.linalg.norm(theirs), rel=1e-3)


# ------------------------------------------------------------------ through recall


@pytest.fixture
def stub_services(tmp_path):
    services = make_services(tmp_path, embedder_obj=StubEmbedder(), store="memory")
    texts = [("小明", "奶糖 went to the vet for a check-up, all fine"),
             ("Sam", "I started learning the cello downtown"),
             ("Sam", "Nice weather today")]
    for i, (speaker, text) in enumerate(texts):  # one session each: no reply context
        ingest.put_messages(services, SPACE, f"s{i}", PutMessagesRequest(messages=[
            MessageIn(seq=1, role="user", speaker=speaker, content=text,
                      at=T0 + timedelta(minutes=i))]))
    return services


def ask(services, query, **kw):
    return recall(services, SPACE, RecallRequest(query=query, recipe="hybrid", **kw))


def test_a_relevant_card_passes_alone_with_verdict_hit(stub_services):
    res = ask(stub_services, "how did the cat's vet visit go?")
    assert res.verdict == "hit"
    assert [c.ref for c in res.cards] == ["message:s0:1"]  # the slot is not filled
    relevance = res.cards[0].score_parts["relevance"]
    assert relevance >= HYBRID.min_relevance
    assert res.trace[-1] == (f"[recall] gate: relevance ≥ {HYBRID.min_relevance:g} "
                             f"(hook-sized recall): 1 of 3 cards pass; "
                             f"best relevance {round(relevance, 3):g}")


def test_nothing_relevant_means_no_card_verdict_none_and_a_trace_line(stub_services):
    res = ask(stub_services, "我的吉他课怎么样了")  # stub: no known word → small talk itself
    assert (res.verdict, res.cards, res.context) == ("none", [], "")
    # the threshold (a Chinese query's) and the margin: the best candidate's relevance
    assert res.trace[-1] == (f"[记忆检索] 没有候选通过准入门槛（相关度 ≥ "
                             f"{HYBRID.min_relevance_cjk:g}，小份召回；最高相关度 0 < "
                             f"{HYBRID.min_relevance_cjk:g}），本次不注入记忆")
    back = ask(stub_services, "我的吉他课怎么样了", min_relevance=0)
    assert back.verdict == "hit" and len(back.cards) == HYBRID.max_cards
    assert not any("没有候选通过" in line for line in back.trace)
    assert back.trace[-1] == ("[记忆检索] 准入门槛关闭（请求指定，min_relevance 0）："
                              "按排序填满卡位")


def test_more_cards_than_a_hook_asks_for_face_the_lower_floor(stub_services):
    res = ask(stub_services, "cat music", max_cards=3)  # the weather is plainly unrelated
    assert res.verdict == "hit"
    assert sorted(c.ref for c in res.cards) == ["message:s0:1", "message:s1:1"]
    assert res.trace[-1].startswith(
        f"[recall] gate: relevance ≥ {HYBRID.min_relevance_wide:g} (wide recall): 2 of 3 "
        "cards pass; best relevance")
    unrelated = ask(stub_services, "我的吉他课怎么样了", max_cards=3)  # small talk itself
    assert (unrelated.verdict, unrelated.cards) == ("none", [])
    assert "大份召回" in unrelated.trace[-1]
    strict = ask(stub_services, "cat", max_cards=3, min_relevance=0.5)  # the request's own
    assert [c.ref for c in strict.cards] == ["message:s0:1"]
    assert strict.trace[-1].startswith("[recall] gate: relevance ≥ 0.5 (requested)")
    ungated = ask(stub_services, "cat music", max_cards=3, min_relevance=0)
    assert len(ungated.cards) == 3 and ungated.trace[-1].startswith("[recall] gate off")


def test_an_empty_space_names_the_gate_with_nothing_to_judge(stub_services):
    res = recall(stub_services, "empty", RecallRequest(query="cat"))
    assert res.verdict == "none" and res.cards == []
    assert res.trace[-1] == (f"[recall] gate: relevance ≥ {HYBRID.min_relevance:g} "
                             "(hook-sized recall); no cards to judge")


def test_recipes_carry_the_gate():
    assert (HYBRID.min_relevance, HYBRID.min_relevance_cjk, HYBRID.min_relevance_wide,
            HYBRID.term_weight, HYBRID.space_weight) == (0.06, 0.09, 0.025, 0.08, 0.1)
    assert RecallRecipe(name="x", min_relevance=0).min_relevance == 0


def test_the_gate_threshold_is_a_setting():
    from chalicelib.config import Settings
    from chalicelib.usecases.recall.recipes import resolve

    assert resolve("hybrid", Settings(min_relevance=0.2)).min_relevance == 0.2
    assert resolve("hybrid", Settings()).min_relevance == 0.06
    assert resolve("hybrid", Settings(min_relevance_cjk=0.1)).min_relevance_cjk == 0.1
    assert resolve("hybrid", Settings(min_relevance_wide=0.01)).min_relevance_wide == 0.01
    assert resolve("hybrid", Settings()).min_relevance_wide == 0.025


def test_a_message_not_embedded_yet_passes_on_its_words(tmp_path):
    """Right after a PUT the message is findable by keyword but has no vector yet (the
    background lane embeds it): the gate judges it on its words. '奶糖体检' holds the bigram
    糖体, which the message does not — two of three terms still admit it; one of three does
    not."""
    from chalicelib.usecases.recall.gate import words_suffice

    svc = make_services(tmp_path, index="background")  # no lane runs: nothing gets embedded
    ingest.put_messages(svc, "s", "c1", PutMessagesRequest(messages=[MessageIn(
        seq=1, role="user", speaker="小明", content="奶糖昨天进行了体检，结果一切正常", at=T0)]))
    out = recall(svc, "s", RecallRequest(query="奶糖体检", now=T0 + timedelta(days=1)))
    assert out.verdict == "hit" and "体检" in out.cards[0].text
    assert any("尚未向量化" in line for line in out.trace)
    assert words_suffice(["a", "b", "c"], ["a", "b"]) and not words_suffice(["a", "b", "c"], ["a"])
    assert not words_suffice(["a", "b"], ["a"]) and words_suffice(["a"], ["a"])
    assert not words_suffice([], [])
    # CJK bigrams count by the characters they cover: 4 of 奶糖打疫苗's 5, then 3 of 5.
    bigrams = ["奶糖", "糖打", "打疫", "疫苗"]
    assert words_suffice(bigrams, ["奶糖", "疫苗"])
    assert not words_suffice(bigrams, ["奶糖", "糖打"])


def test_a_chinese_question_whose_bigrams_straddle_words_still_finds_a_new_message(tmp_path):
    """"奶糖打疫苗了吗" right after the PUT of "我家的猫奶糖昨天打了疫苗": two of its four
    bigrams straddle word boundaries, yet the words name the message: a hook-sized recall
    injects it before its embedding exists; an unrelated message is still refused."""
    svc = make_services(tmp_path, index="background")  # no lane runs: nothing gets embedded
    ingest.put_messages(svc, "s", "c1", PutMessagesRequest(messages=[
        MessageIn(seq=0, role="user", speaker="小明", content="我家的猫奶糖昨天打了疫苗", at=T0),
        MessageIn(seq=1, role="user", speaker="小明", content="奶糖今天很乖，吃了很多", at=T0)]))
    out = recall(svc, "s", RecallRequest(query="奶糖打疫苗了吗", now=T0 + timedelta(days=1)))
    assert [c.ref for c in out.cards] == ["message:c1:0"]


class _Keywords:
    """A keyword index that holds some words of the space."""

    def __init__(self, words):
        self.words, self.asked = set(words), []

    def held_terms(self, space, terms):
        self.asked.append(list(terms))
        return {t for t in terms if t in self.words}


def test_terms_the_space_never_used_cost_relevance():
    g = gate(["lgbtq", "support", "group"], baseline=0.80)
    near = card("We went to the support group together.", vector=0.90)
    before = g.judge(near).relevance
    keywords = _Keywords({"support", "group"})
    g.space_holds(keywords, "sp", 0.1)
    assert keywords.asked == [["lgbtq", "support", "group"]]  # one call for all the words
    assert g.space_share == pytest.approx(2 / 3)
    assert g.judge(near).relevance == pytest.approx(before - 0.1 / 3)
    # every term held somewhere: nothing changes; weight 0: not even read
    held = gate(["support", "group"], baseline=0.80)
    first = held.judge(near).relevance
    held.space_holds(keywords, "sp", 0.1)
    assert held.judge(near).relevance == pytest.approx(first)
    off = gate(["lgbtq"], baseline=0.80)
    asked = len(keywords.asked)
    off.space_holds(keywords, "sp", 0.0)
    assert len(keywords.asked) == asked and off.space_share == 1.0


def test_a_card_in_another_language_is_not_charged_for_words_the_space_lacks():
    g = gate(["lisbon", "flight"], baseline=0.80)
    g.space_holds(_Keywords(set()), "sp", 0.1)  # a Chinese space: no English word held
    chinese = card("Sam 订了去里斯本的机票", vector=0.86)
    english = card("Sam booked the flight", vector=0.86)
    assert g.judge(english).relevance < g.judge(chinese).relevance
    assert g.space_share == 0.0


def test_a_foreign_cards_lift_counts_as_lift_over_cross_lift_where_a_wide_recall_reads_it():
    g = gate(["诊所", "街区"], baseline=0.80, threshold=0.025)
    g.baselines, g.lang = {"zh": 0.80, "en": 0.78}, "zh"
    english = card("the new clinic is in Ballard", vector=0.79)  # lift 0.01 above English
    assert not g.judge(english).admitted
    g.cross_lift = 0.3
    assert g.judge(english).relevance == pytest.approx(0.01 / 0.3)
    assert g.judge(english).admitted
    chinese = card("新诊所在巴拉德", vector=0.81)  # the query's language: as it is
    assert g.judge(chinese).relevance == pytest.approx(0.01 + 0.08 * 0.5)


class _Glossary:
    """Three words each way, as CC-CEDICT gives them."""

    name = "stub"
    _zh: ClassVar[dict[str, set[str]]] = {"daughter": {"女儿", "闺女"}, "dog": {"狗", "犬"},
                                          "name": {"名字"}, "call": {"叫"}}

    def in_chinese(self, term):
        return frozenset(self._zh.get(term, ()))

    def in_english(self, word):
        return frozenset(t for t, words in self._zh.items() if word in words)


def test_a_foreign_card_holds_the_querys_words_as_its_own_languages():
    """"What is the name of 林悦's daughter?" and "女儿，叫朵朵，五岁": no term of the question
    is in the card's script, but daughter is 女儿 — a third of the terms the glossary knows."""
    g = gate(["name", "daughter", "old"], baseline=0.80, threshold=0.06)
    daughter = card("终于把孩子哄睡了。女儿，叫朵朵，五岁，上中班。", vector=0.855)
    assert g.judge(daughter).coverage == 0.0  # no glossary: no word in common
    g.glossary = _Glossary()
    judged = g.judge(daughter)
    assert judged.coverage == pytest.approx(1 / 2)  # of name, daughter ("old": not known)
    assert judged.admitted and judged.relevance == pytest.approx(0.055 + 0.08 / 2)
    # a Chinese question reads an English card the other way round
    zh = Gate(threshold=0.06, term_weight=0.08, terms=["女儿", "几岁"],
              baselines={"zh": 0.80, "en": 0.80}, bound=None, lang="zh", glossary=_Glossary())
    assert zh.judge(card("My daughter Ava turned five", vector=0.85)).coverage == 1.0


def test_words_no_card_holds_across_languages_are_charged_half_the_space_term():
    """"What breed is 林悦's dog?" of a Chinese space whose ranked cards say neither 狗狗 nor
    犬: a word the space did not use, charged as the space term charges one within a
    language, at ACROSS_MISS of it (a dictionary misses much of how the other language says
    a question)."""
    from chalicelib.usecases.recall.gate import ACROSS_MISS

    g = gate(["name", "dog"], baseline=0.80, threshold=0.06)
    g.glossary, g.space_weight = _Glossary(), 0.1
    husky = card("一只哈士奇把小满白大褂扯烂了", vector=0.866)
    ranked = [husky, card("小满养的黑猫 三岁了", vector=0.85)]
    assert g.admit(ranked) == []
    assert g.held_across == {"zh": 1 - ACROSS_MISS}  # neither term held: the space share
    assert g.best == pytest.approx(0.066 - 0.1 * ACROSS_MISS)
    named = gate(["name", "dog"], baseline=0.80, threshold=0.06)
    named.glossary, named.space_weight = _Glossary(), 0.1
    admitted = named.admit([husky, card("它的名字叫豆豆", vector=0.85)])
    assert named.held_across == {"zh": pytest.approx(1 - ACROSS_MISS / 2)}  # name held, dog not
    # the husky, no word held, falls below; the card holding 名字 passes on it
    assert [c.text for c in admitted] == ["它的名字叫豆豆"]


def test_a_code_switched_card_holds_the_querys_words_as_written():
    """Users switch languages mid-sentence: "Mochi 在踩键盘 Vivi's cat!英短蓝猫" is told mostly
    in Chinese but holds "cat" as written, and "终于 off work 了" holds "work", which the
    glossary's Chinese words (猫, 工作) miss. Its coverage and the space term across count
    such a term held; a card that holds it neither way still counts nothing."""
    from chalicelib.usecases.recall.gate import ACROSS_MISS

    g = gate(["cat", "call"], baseline=0.80, threshold=0.06)
    g.glossary, g.space_weight = _Glossary(), 0.1
    mochi = card("Mochi 在踩键盘 我去喂她 Vivi's cat!英短蓝猫 two years old", vector=0.85)
    plain = card("Mochi 在踩键盘 我去喂她 英短蓝猫 两岁了", vector=0.85)
    assert g.judge(mochi).coverage == 0.5  # cat, as written; call (叫) not held
    assert g.judge(plain).coverage == 0.0
    g.admit([mochi])
    assert g.held_across == {"zh": pytest.approx(1 - ACROSS_MISS / 2)}  # cat held, call not
    other = gate(["cat", "call"], baseline=0.80, threshold=0.06)
    other.glossary, other.space_weight = _Glossary(), 0.1
    other.admit([plain])
    assert other.held_across == {"zh": pytest.approx(1 - ACROSS_MISS)}
    # with glossary words held too: "name" as 名字, "cat" as written
    named = gate(["name", "cat"], baseline=0.80, threshold=0.06)
    named.glossary = _Glossary()
    assert named.judge(card("它的名字是 Mochi, my cat", vector=0.85)).coverage == 1.0
    assert named.judge(card("它的名字是 Mochi", vector=0.85)).coverage == 1.0  # name: all known


def test_a_card_is_judged_with_the_question_it_answers():
    """"Sprocket. Three legs, one ear" answers "And the cat — what's its name?": asked
    "What's Jess's cat called?", the answer holds no word of it, the question does
    (`Gate.asked`). Its language and its meaning stay its own: only the words are read."""
    g = gate(["cat", "call"], baseline=0.80, threshold=0.09)
    answer = card("Sprocket. Three legs, one ear, zero manners.", vector=0.85)
    assert g.judge(answer).coverage == 0.0 and not g.judge(answer).admitted
    g.asked = {answer.ref: "And the cat — what's its name? Who called?"}
    judged = g.judge(answer)
    assert judged.coverage == 1.0 and judged.admitted
    assert judged.relevance == pytest.approx(0.05 + 0.08)
    assert g.admit([answer])[0].text == answer.text  # the card itself is not changed
    # a Chinese answer to an English question is still judged as a Chinese card
    zh = gate(["cat"], baseline=0.80, threshold=0.09)
    zh.baselines = {"en": 0.70, "zh": 0.80}
    mochi = card("英短蓝猫，两岁", vector=0.85)
    zh.asked = {mochi.ref: "Is that your cat?"}
    assert zh.judge(mochi).relevance == pytest.approx(0.05 + 0.08)  # the zh small talk


def test_cc_cedict_gives_the_words_recall_compares():
    from chalicelib.adapters.glossary_cedict import CedictGlossary
    from chalicelib.domain.textproc import tokenize

    g = CedictGlossary()
    assert {"女儿", "闺女"} <= g.in_chinese("daughter")
    assert {"狗", "狗狗"} <= g.in_chinese("dog") and "马" in g.in_chinese(tokenize("horse")[0])
    assert "即" not in g.in_chinese("name")  # its first gloss "namely" only stems to "name"
    assert "女" not in g.in_chinese("daughter")  # a character stands for its first gloss only
    assert tokenize("language")[0] in g.in_english("语言")
    # "continuously; always; all the way through": one sense, three glosses
    assert tokenize("always")[0] in g.in_english("一直")
    assert g.in_chinese("zzzz") == frozenset()


def test_the_trace_names_the_threshold_the_best_card_faced():
    """A Chinese card judged by its characters needs min_relevance_cjk + units_margin: the
    trace said "最高相关度 0.093 < 0.09" — a contradiction to whoever reads it."""
    from chalicelib.usecases.recall import GateThreshold, Trace, trace_gate

    g = gate(["运动"], threshold=0.09)
    g.lang = "zh"
    g.by_characters(0.01)
    g.admit([card("滑板不玩了 上周摔了个屁股墩", vector=0.893)])
    assert (g.passed, g.best_needed) == (0, pytest.approx(0.10))
    trace = Trace(zh=True, lines=[])
    trace_gate(trace, GateThreshold(0.09, "hook"), [g])
    assert trace.lines[-1] == (f"[记忆检索] 没有候选通过准入门槛（相关度 ≥ 0.09，小份召回；最高"
                               f"相关度 {round(g.best, 3):g} < 0.1（按字判断的中文卡）），本次不注入记忆")
    english = gate(["sport"], threshold=0.06)
    english.admit([card("I quit skateboarding", vector=0.85)])
    trace = Trace(zh=False, lines=[])
    trace_gate(trace, GateThreshold(0.06, "hook"), [english])
    assert trace.lines[-1].endswith(f"best {round(english.best, 3):g} < 0.06); nothing to inject")


def test_the_trace_says_what_left_the_cards_that_passed():
    """"2 of 23 cards pass" and then verdict none: the two were the character's own lines,
    which a hook leaves out for a question about the user (rerank.user_told)."""
    from chalicelib.usecases.recall import Trace, trace_left_out

    trace = Trace(zh=False, lines=[])
    trace_left_out(trace, 0, 0)
    assert trace.lines == []
    trace_left_out(trace, 2, 1)
    assert trace.lines == ["[recall] left out of the cards that passed the gate: 2 of the "
                           "character's own lines (a person's life is told by their own "
                           "turns), 1 aside out of character (the player's own week, not the "
                           "persona asked about)"]
    zh = Trace(zh=True, lines=[])
    trace_left_out(zh, 1, 0)
    assert zh.lines == ["[记忆检索] 通过门槛的卡中略去 1 张角色自己说的话（人的经历由其本人说出）"]
