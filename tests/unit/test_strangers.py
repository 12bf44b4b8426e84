"""A hook-sized recall whose question names someone no memory holds injects nothing
(chalicelib.usecases.recall.strangers_asked_about, domain.names.name_like_words)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chalicelib.config import Settings
from chalicelib.domain.models import MessageIn, PutMessagesRequest, RecallRequest
from chalicelib.domain.names import name_like_words
from chalicelib.usecases.extract import run_extraction
from chalicelib.usecases.ingest import put_messages
from chalicelib.usecases.recall import recall
from chalicelib.wiring import build_services


@pytest.mark.parametrize("query,words", [
    ("What did Melanie paint last May?", [["Melanie"]]),
    ("What does Jon think about Gina's new studio?", [["Jon"], ["Gina"]]),
    ("What does John like about Lebron James?", [["John"], ["Lebron", "James"]]),
    ("Where did I go in March?", []),  # the calendar and I are no one
    ("Melanie, what did you paint?", []),  # a sentence's opener may be any word
    ("上周二我去哪了", []),
])
def test_name_like_words(query, words):
    assert name_like_words(query) == words


def told(tmp_path, at: datetime, user: tuple[str, str], reply: tuple[str, str]):
    """A space holding one user turn and the companion's reply, extracted."""
    services = build_services(Settings(data_dir=tmp_path, embedder="hash", schedule="off",
                                       salience="rules", _env_file=None), index="inline")
    put_messages(services, "s", "1", PutMessagesRequest(messages=[
        MessageIn(seq=1, role="user", speaker=user[0], at=at, content=user[1]),
        MessageIn(seq=2, role="assistant", speaker=reply[0], at=at, content=reply[1])]))
    run_extraction(services, "s", "1")
    return services


@pytest.fixture()
def services(tmp_path):
    return told(tmp_path, datetime(2026, 5, 3, 20, tzinfo=UTC),
                ("Caroline", "I painted a sunrise over the lake with my friend Dana today."),
                ("Echo", "That sounds lovely, Caroline!"))


def test_a_hook_recall_about_a_stranger_injects_nothing(services):
    out = recall(services, "s", RecallRequest(query="What did Melanie paint at the lake?"))
    assert (out.verdict, out.cards) == ("none", [])
    assert any("Melanie" in line and "never seen" in line for line in out.trace)


def test_near_known():
    from chalicelib.domain.names import near_known

    assert near_known("Andew", ["Andrew"]) and near_known("Himalayan", ["the Himalayas"])
    assert not near_known("Jean", ["Jon", "Gina"])


def test_known_names_and_wide_recalls_still_answer(services):
    # Dana is in a memory, Caroline is a speaker: the gate decides as before
    for query in ("What did Dana paint with me at the lake?", "What did Caroline paint at the lake?",
                  "What did Carolin paint at the lake?"):  # one letter off a speaker
        out = recall(services, "s", RecallRequest(query=query))
        assert not any("never seen" in line for line in out.trace)
    # a wide recall (a search, a tool's read) answers about anyone
    wide = recall(services, "s", RecallRequest(query="What did Melanie paint at the lake?",
                                               max_cards=20, limit=20))
    assert not any("never seen" in line for line in wide.trace)


def test_a_name_in_the_other_script_is_no_stranger(tmp_path):
    """Issue 36: "When are we flying to Kyoto?" of a chat that says 京都 was vetoed as a
    stranger; a space that talks in Chinese cannot tell a stranger by Latin words."""
    services = told(tmp_path, datetime(2026, 12, 1, 20, tzinfo=UTC),
                    ("小林", "我们今天订好了去京都的机票，一月二号出发，跟我姐一起。"),
                    ("Mika", "好期待！"))
    out = recall(services, "s", RecallRequest(query="When are we flying to Kyoto?"))
    assert not any("never seen" in line for line in out.trace)


def test_an_english_space_still_refuses_a_stranger(services):
    out = recall(services, "s", RecallRequest(query="What did Zelda paint at the lake?"))
    assert any("Zelda" in line and "never seen" in line for line in out.trace)
