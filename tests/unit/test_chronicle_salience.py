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
