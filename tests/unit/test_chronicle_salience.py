"""The chronicle keeps facts and skips small talk, in Chinese and English, through the real
offline extractor with the bundled e5 salience judge (tests/data/chronicle_chat_*.json: chats
written for these tests, each turn marked fact or small talk)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from chalicelib.adapters.salience_e5 import E5SalienceJudge
from chalicelib.domain.models import Message
from chalicelib.ports import ExtractionContext
from chalicelib.usecases.extract.offline import OfflineExtractor

DATA = Path(__file__).parent.parent / "data"
pytestmark = pytest.mark.e5


@pytest.fixture(scope="module")
def extractor() -> OfflineExtractor:
    return OfflineExtractor(E5SalienceJudge())


def sessions(name: str):
    chat = json.loads((DATA / name).read_text(encoding="utf-8"))
    for number, session in enumerate(chat["sessions"], start=1):
        at = datetime.fromisoformat(session["at"])
        messages, facts = [], set()
        for seq, (role, text, fact) in enumerate(session["turns"], start=1):
            messages.append(Message(space="sp", session=str(number), seq=seq, role=role,
                                    speaker=chat["speakers"][role], content=text, at=at,
                                    content_hash=f"h{number}-{seq}"))
            if fact:
                facts.add(seq)
        yield str(number), messages, facts


@pytest.mark.parametrize("name", ["chronicle_chat_zh.json", "chronicle_chat_en.json"])
def test_every_fact_kept_and_no_event_from_small_talk_alone(extractor, name):
    for session, messages, facts in sessions(name):
        drafts = extractor.extract(messages, ExtractionContext(space="sp", session=session))
        cited = [{q for s in d.sources for q in range(s.seq_start, s.seq_end + 1)}
                 for d in drafts]
        missing = facts - set().union(*cited)
        assert not missing, [m.content for m in messages if m.seq in missing]
        small_talk_only = [d.summary for d, seqs in zip(drafts, cited, strict=True)
                           if not seqs & facts]
        assert not small_talk_only


def test_titles_carry_no_date_stamp_and_the_date_is_in_when(extractor):
    at = datetime.fromisoformat("2026-06-15T10:00:00+08:00")
    msg = Message(space="sp", session="1", seq=1, role="user", speaker="小明",
                  content="奶糖昨天进行了体检，结果一切正常", at=at, content_hash="h")
    [draft] = extractor.extract([msg], ExtractionContext(space="sp", session="1"))
    assert "2026" not in draft.title and "（" not in draft.title
    assert draft.when.start.date().isoformat() == "2026-06-14"


def test_turns_typed_without_marks_keep_their_break_in_the_summary(extractor):
    """Two turns of one happening typed as a phone types them, without a closing mark, ran
    together in its summary: "它把周宁拖鞋咬烂了两岁半" (a chat written for issue 36's
    held-out check)."""
    at = datetime.fromisoformat("2026-11-02T21:00:00+08:00")
    turns = [("user", "周宁", "对了 我养了只柯基 叫豆包 今天它把我拖鞋咬烂了"),
             ("assistant", "阿柒", "*捂嘴笑* 豆包好调皮！它多大啦？"),
             ("user", "周宁", "两岁半 可能精力太旺盛了")]
    messages = [Message(space="sp", session="1", seq=seq, role=role, speaker=who,
                        content=text, at=at, content_hash=f"h{seq}")
                for seq, (role, who, text) in enumerate(turns, start=1)]
    drafts = extractor.extract(messages, ExtractionContext(space="sp", session="1"))
    [draft] = [d for d in drafts if "豆包" in d.summary]
    assert [(s.seq_start, s.seq_end) for s in draft.sources] == [(1, 1), (3, 3)]
    assert "咬烂了 两岁半" in draft.summary


def chat(turns, at="2026-11-20T20:30:00+08:00"):
    start = datetime.fromisoformat(at)
    return [Message(space="sp", session="1", seq=seq, role=role, speaker=who, content=text,
                    at=start, content_hash=f"h{seq}")
            for seq, (role, who, text) in enumerate(turns, start=1)]


@pytest.mark.parametrize("turns,apart", [
    ([("user", "周宁", "有好消息 我拿到网易的offer了 做测试开发 下周一入职"),
      ("assistant", "阿柒", "恭喜恭喜！！*转圈圈*"),
      ("user", "周宁", "还有 我搬家了 从滨江搬到了余杭 离新公司近")], "搬家"),
    ([("user", "Nora", "last shift at Fig & Fern was friday. Dev made me a card"),
      ("assistant", "Juniper", "Oh, that's lovely. Of course you'll miss them."),
      ("user", "Nora", "also quit pottery. can't do thursdays from York")], "pottery"),
])
def test_a_turn_opening_the_next_thing_tells_another_happening(extractor, turns, apart):
    """After the other side's reply the teller's next turn went on with the last happening
    when its vectors were near enough: the new job and the move were one event, dated by the
    job's start (a held-out chat, issue 36). "还有", "also", "btw" open the next thing."""
    drafts = extractor.extract(chat(turns), ExtractionContext(space="sp", session="1"))
    [told] = [d for d in drafts if apart in d.summary]
    assert [(s.seq_start, s.seq_end) for s in told.sources] == [(3, 3)]
    assert not told.title.startswith(("还有", "also")) and "also" not in told.title


def test_a_title_leaves_out_the_stretch_around_its_day(extractor):
    """"下个月过生日 12月8号": dated the 8th (timeparse.within), and neither time in the title."""
    [draft] = extractor.extract(chat([("user", "周宁", "还有个事 我女朋友小雨下个月过生日 12月8号 "
                                                   "我想给她订个餐厅")], at="2026-11-02T21:00:00+08:00"),
                                ExtractionContext(space="sp", session="1"))
    assert draft.when.start.date().isoformat() == "2026-12-08"
    assert "下个月" not in draft.title and "12月8号" not in draft.title
    assert "小雨" in draft.title and "生日" in draft.title


@pytest.mark.parametrize("turns", [
    [("user", "Dana", "anyway I signed up for a pottery class, tuesdays at 7"),
     ("assistant", "Rook", "Ooh, pottery! First class when?"),
     ("user", "Dana", "next tuesday")],
    [("user", "周宁", "我报了个吉他班 每周三晚上上课"),
     ("assistant", "阿柒", "好酷！第一节课什么时候？"),
     ("user", "周宁", "下周三")],
])
def test_the_answer_to_when_goes_on_with_the_happening_asked_about(extractor, turns):
    """Asked when, a reply that is its time ("next tuesday") was a happening of its own,
    titled by what was left of it (a held-out chat, issue 36): it tells the one asked about."""
    drafts = extractor.extract(chat(turns, at="2026-10-09T21:15:00+08:00"),
                               ExtractionContext(space="sp", session="1"))
    assert [[(s.seq_start, s.seq_end) for s in d.sources] for d in drafts] == [[(1, 1), (3, 3)]]


def test_a_gesture_acted_is_no_part_of_what_happened(extractor):
    """"*grins* Also I finally bought a horse" was summarised "grins Also Mara finally bought a
    horse", and "*小声嘀咕* 好吧好吧" made an event of its own (沈砚's chat, issue 36): a word or
    two acted between asterisks is how the teller says it. A longer action is the story's."""
    from chalicelib.domain.salience import statements

    assert statements("*grins* Also I finally bought a horse.") == [
        "Also I finally bought a horse."]
    assert statements("*接过木剑比划了两下* 卯时？那也太早了……*小声嘀咕* 好吧好吧。") == ["那也太早了…"]
    assert statements("*Jess drags a duffel bag up the ramp.* I'm here.") == [
        "*Jess drags a duffel bag up the ramp.* I'm here."]
    [draft] = extractor.extract(chat([("user", "Mara", "*grins* Also I finally bought a horse. "
                                                        "A grey mare called Biscuit.")]),
                                ExtractionContext(space="sp", session="1"))
    assert "grins" not in draft.summary and "horse" in draft.title
