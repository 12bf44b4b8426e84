"""A question about now is answered by the latest telling (recall/rerank.latest_first,
query.asks_about_now, recipe now_recency): "我现在在哪上班呀" asked of a chat that told the old
job in September and the new one in October."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chalicelib.domain.models import Card, When
from chalicelib.usecases.recall.query import asks_about_now
from chalicelib.usecases.recall.recipes import HYBRID
from chalicelib.usecases.recall.rerank import latest_first, rerank
from tests.unit.conftest import T0


@pytest.mark.parametrize(("query", "now"), [
    ("我现在在哪上班呀", True), ("我们家现在住在哪个城市？", True), ("我还在学车吗？", True),
    ("Where does Nora work now?", True), ("Is Sam still learning the cello?", True),
    ("What is Jess's current job?", True),
    ("我之前在哪家诊所上班", False), ("What was Nora's old job?", False),
    ("阿凯生日是哪天", False), ("Where did Vivi live before she moved?", False),
])
def test_a_query_asks_about_now(query, now):
    assert asks_about_now(query) is now


def card(text: str, day: int, score: float) -> Card:
    start = T0 + timedelta(days=day)
    return Card(ref=f"event:{day}", kind="event", title=text, text=text, score=score,
                when=When(start=start, end=start + timedelta(days=1)))


def test_the_latest_telling_rises_by_its_place_among_the_dates():
    old = card("小满在皓齿口腔当前台", 0, 1.0)
    years_ago = card("三年前捡的灵狐", -1000, 0.9)
    new = card("找到了 安安宠物医院 做助理", 30, 0.8)
    pairs = [(old, None), (years_ago, None), (new, None)]
    latest_first(pairs, 1.0)
    # places 0 / 0.5 / 1 among three dates — one far older memory does not flatten the rest
    assert years_ago.score == pytest.approx(0.9)
    assert old.score == pytest.approx(1.0 * 1.5)
    assert new.score == pytest.approx(0.8 * 2.0)
    assert new.score_parts["now"] == 1.0


def test_rerank_puts_the_new_job_first_only_for_a_question_about_now():
    def cards():
        return [(card("小满在皓齿口腔当前台", 0, 1.0), None),
                (card("找到了 安安宠物医院 做助理", 30, 0.8), None)]

    assert [c.ref for c in rerank(cards(), set(), HYBRID, now=True)] == ["event:30", "event:0"]
    assert [c.ref for c in rerank(cards(), set(), HYBRID)] == ["event:0", "event:30"]
    assert HYBRID.now_recency == 1.0


def test_a_hooks_cards_leave_out_the_characters_own_lines_unless_asked_about():
    """"What is the name of 小满's dog?" got "阿澈: 土豆！好可爱的名字。" — the AI's own line, admitted
    on 名字; a question about someone is answered by their turns, unless it names the
    character, or no one."""
    from chalicelib.usecases.recall import user_told

    ai = Card(ref="message:s:80", kind="message", title="", text="阿澈: 土豆！好可爱的名字。",
              score=1.0, role="assistant", speaker="阿澈")
    user = Card(ref="message:s:79", kind="message", title="", text="小满: 还有 我带回家了 叫土豆",
                score=0.9, role="user", speaker="小满")
    event = card("小满带回家一只小橘猫 叫土豆", 1, 0.8)
    assert [c.ref for c in user_told([ai, user, event], {"小满"})] == [user.ref, event.ref]
    assert [c.ref for c in user_told([ai, user], {"阿澈"})] == [ai.ref, user.ref]
    assert [c.ref for c in user_told([ai, event], set())] == [ai.ref, event.ref]  # about no one


@pytest.mark.parametrize(("text", "aside"), [
    ("(ooc: brb, doorbell)", True),
    ("Jess: (ooc: next long session thursday? oh wait no, that's thanksgiving lol)", True),
    ("(ooc: aaand that's where Jess will stop tonight (2026-12-05~…", True),  # cut short
    ("OOC: next session friday?", True),
    ("（ooc：今天先到这里～明天早八 晚安！）", True),
    ("苏禾: （ooc：好久不见！这周好忙 来啦）*半月后，云京城南，柳叶巷。*", False),
    ("(ooc: sorry I vanished (2026-12-01)!) *Jess is hunched over a mug*", False),
    ("Jess sold Rusty", False),
    ("Nora: cooking (badly) tonight", False),
])
def test_an_aside_out_of_character_is_told_from_a_turn_that_goes_on_in_character(text, aside):
    from chalicelib.domain.textrules import wholly_out_of_character

    assert wholly_out_of_character(text) is aside


def test_a_hooks_cards_for_a_named_persona_leave_out_the_players_asides():
    """"Jess 在火星上是做什么工作的？" got "(ooc: aaand that's where I'll stop tonight…)": the
    player's aside is not about the persona the question names; asked in the first person
    ("上周六我说出差到底是哪天走？") it may be the answer, and stays."""
    from chalicelib.usecases.recall.rerank import in_character

    aside = Card(ref="message:s:76", kind="message", title="", role="user", speaker="Jess",
                 text="Jess: (ooc: aaand that's where I'll stop tonight, work is crazy)",
                 score=1.0)
    story = card("Jess rents a bunk in a capsule stack on Ring 4", 1, 0.8)
    assert [c.ref for c in in_character([aside, story], {"Jess"})] == [story.ref]
    assert [c.ref for c in in_character([aside, story], set())] == [aside.ref, story.ref]


def test_a_hook_shows_the_turn_that_told_the_fact_asked_first():
    """Issue 36: "Where does Nora live now?" — the profile knew lives_in York from "hello from
    York!!", which holds neither "live" nor a word the gate reads, and the hook showed the
    Leeds/London talk. The cards citing the fact's turns come first, gate or not."""
    from chalicelib.domain.models import Source
    from chalicelib.ports import Hit
    from chalicelib.usecases.recall import told_first
    from chalicelib.usecases.recall.profile import Answer

    def said(seq: int, text: str) -> Card:
        return Card(ref=f"message:s:{seq}", kind="message", title="", text=text, score=1.0,
                    sources=[Source(session="s", seq_start=seq, seq_end=seq)])

    york, leeds, moving = said(87, "Nora: hello from York!!"), \
        said(23, "Nora: he wants to move to London, I'd rather die. Leeds is home"), \
        said(73, "Nora: mum's coming to help on moving day")
    ranked, admitted = [leeds, moving, york], [leeds, moving]
    told = Answer([Hit("message:s:87", 1.0)], ["York"])
    assert [c.ref for c in told_first(ranked, admitted, told)] == [york.ref, leeds.ref,
                                                                   moving.ref]
    assert told_first(ranked, admitted, Answer([], [])) == admitted


def test_then_the_cards_that_say_the_value_told():
    """"我现在在哪家公司上班，做什么？": the rules read 成本会计 from the interview ("约了下周二视频
    面试，做成本会计"), and the turn that said the job began ("和光精密，成本会计，明天就去报到")
    was the first card ranked and turned away by the gate (issue 36). After the cards citing
    the fact's turns, those saying its value."""
    from chalicelib.domain.models import Source
    from chalicelib.ports import Hit
    from chalicelib.usecases.recall import holds_value, told_first
    from chalicelib.usecases.recall.profile import Answer

    def said(seq: int, text: str) -> Card:
        return Card(ref=f"message:s:{seq}", kind="message", title="", text=text, score=1.0,
                    sources=[Source(session="s", seq_start=seq, seq_end=seq)])

    starts = said(77, "林悦: 和光精密，成本会计，明天就去报到")
    interview = said(65, "林悦: 有个日企叫和光精密，约了下周二视频面试，做成本会计")
    yoga = said(30, "林悦: 八段锦好久没练了")
    ranked, admitted = [starts, yoga, interview], [yoga]
    told = Answer([Hit("message:s:65", 1.0)], ["成本会计"])
    assert [c.ref for c in told_first(ranked, admitted, told)] == [
        interview.ref, starts.ref, yoga.ref]
    york = said(12, "Nora: the york flat has a window seat")
    assert holds_value(york, ["York"]) and not holds_value(said(13, "Nora: Yorkshire"), ["York"])
    assert not holds_value(yoga, ["练", "成本会计"])  # one character says nothing


@pytest.mark.parametrize(("question", "attribute", "else_"), [
    ("Nora 的哥哥住在哪里？", "lives_in", True), ("我男朋友在哪上班", "works_at", True),
    ("Where does my sister work?", "works_at", True),
    ("Who was Vivi's boyfriend, and why did they break up?", "partner", False),
    ("Where does Nora live now?", "lives_in", False), ("我们家现在住在哪个城市？", "lives_in", False),
])
def test_a_question_about_someone_of_the_persons_asks_their_fact(question, attribute, else_):
    """"Nora 的哥哥住在哪里？" (never said) must not be answered with where Nora lives."""
    from chalicelib.domain.fact_questions import asks_of_someone_else

    assert asks_of_someone_else(question, attribute) is else_


@pytest.mark.parametrize(("question", "first"), [
    ("Where does Nora live now?", True), ("我以前在哪上班？干了几年？", True),
    ("Nora 在学什么语言？", True),
    # naming a pet, a girlfriend or an allergy is no asking for it (LoCoMo 44: the hook lost
    # four answers to the turn that told Andrew's dog or girlfriend)
    ("Did Audrey and Andrew grow up with a pet dog?", False),
    ("When is Andrew planning to go to the beach with his girlfriend?", False),
    ("What underlying condition might Joanna have based on her allergies?", False),
])
def test_only_a_question_asking_for_the_value_puts_its_telling_first(question, first):
    from chalicelib.domain.fact_questions import ASKS_THE_VALUE, attribute_asked

    assert (attribute_asked(question) in ASKS_THE_VALUE) is first


@pytest.mark.parametrize(("question", "attribute", "past"), [
    # a word of the past in another clause asks something else: the home now
    ("Which city does 小满 live in, and where is she from originally?", "lives_in", False),
    ("Where did Vivi live before moving to Shenzhen?", "lives_in", True),
    ("苏禾去云京之前住在哪，开的什么铺子？", "lives_in", True),
    ("What was Nora's old job?", "works_as", True),
    ("我现在在哪家公司上班，做什么？", "works_at", False),
])
def test_the_clause_asking_the_fact_says_past_or_now(question, attribute, past):
    from chalicelib.domain.fact_questions import fact_asked
    from chalicelib.usecases.recall.query import asks_about_past

    asked, clause = fact_asked(question)
    assert asked == attribute and asks_about_past(clause) is past
