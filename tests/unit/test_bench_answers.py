"""bench/answers.py: the model's answers kept and replayed. A request asked before is answered
from the book without the model server (not even started); a request that differs in
anything the server reads is asked again; the replayed answer is validated as a fresh one and
keeps the cost it had when it was asked."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from bench.answers import AnswerBook, ReplayingClient
from tests.llm_double import ChatDouble, Reply


class Form(BaseModel):
    lives_in: str | None = None


class DoubleServer:
    """Stands where LocalModelServer stands: `ensure()` is the base URL of a running server."""

    def __init__(self, url: str | None):
        self.url = url
        self.model_path = Path("/models/tiny.gguf")
        self.started = 0

    def ensure(self) -> str:
        if self.url is None:
            raise AssertionError("the model server was started for a replayed answer")
        self.started += 1
        return self.url


def test_an_answer_asked_once_is_replayed_without_the_server(tmp_path):
    book_path = tmp_path / "answers.sqlite"
    with ChatDouble() as double:
        double.reply(Reply(content='{"lives_in": "Leeds"}', delay=0.05, prompt_tokens=40,
                           completion_tokens=7))
        first = ReplayingClient(DoubleServer(double.url), AnswerBook(book_path))
        assert first.complete_json("sys", "I live in Leeds", Form).lives_in == "Leeds"
        assert (first.asked, first.replayed, len(double.requests)) == (1, 0, 1)
        first.book.close()

    again = ReplayingClient(DoubleServer(None), AnswerBook(book_path))  # no server at all
    assert again.complete_json("sys", "I live in Leeds", Form).lives_in == "Leeds"
    assert (again.asked, again.replayed) == (0, 1)
    assert again.replayed_seconds >= 0.05  # the seconds it took when it was asked
    assert (again.usage.prompt_tokens, again.usage.completion_tokens) == (40, 7)


@pytest.mark.parametrize("change", ["system", "user", "max_tokens"])
def test_a_request_that_differs_is_asked_again(tmp_path, change):
    book = AnswerBook(tmp_path / "answers.sqlite")
    with ChatDouble() as double:
        double.reply_json({"lives_in": "Leeds"}).reply_json({"lives_in": "York"})
        client = ReplayingClient(DoubleServer(double.url), book)
        client.complete_json("sys", "I moved", Form, max_tokens=100)
        args = {"system": "sys", "user": "I moved", "max_tokens": 100}
        args[change] = 200 if change == "max_tokens" else f"{args[change]} again"
        out = client.complete_json(args["system"], args["user"], Form,
                                   max_tokens=args["max_tokens"])
    assert out.lives_in == "York"
    assert (client.asked, client.replayed, len(double.requests)) == (2, 0, 2)


def test_a_replayed_answer_is_validated_like_a_fresh_one(tmp_path):
    """A kept answer that does not validate is retried as the adapter retries any: the
    retry (a new request: it holds the bad answer) goes to the model, and is kept too."""
    book_path = tmp_path / "answers.sqlite"
    with ChatDouble() as double:
        double.reply_text("not json at all").reply_json({"lives_in": "Leeds"})
        client = ReplayingClient(DoubleServer(double.url), AnswerBook(book_path))
        assert client.complete_json("sys", "hi", Form).lives_in == "Leeds"
        assert client.asked == 2
    replay = ReplayingClient(DoubleServer(None), AnswerBook(book_path))
    assert replay.complete_json("sys", "hi", Form).lives_in == "Leeds"
    assert (replay.asked, replay.replayed) == (0, 2)
