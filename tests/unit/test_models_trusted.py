"""`trusted` builds exactly what pydantic's model_construct builds, for the models ingest makes
in bulk (a pydantic upgrade that changes the internals it sets makes this fail)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chalicelib.domain.models import IndexDoc, Message, MessageIn, trusted
from chalicelib.usecases.indexing import message_doc

AT = datetime(2026, 6, 15, 10, 0, tzinfo=UTC)


def _same(a, b) -> None:
    assert type(a) is type(b)
    assert a == b
    assert a.model_fields_set == b.model_fields_set
    assert a.model_dump() == b.model_dump()
    assert a.model_dump_json() == b.model_dump_json()
    assert a.__pydantic_extra__ == b.__pydantic_extra__
    assert a.__pydantic_private__ == b.__pydantic_private__


def test_message_from_input_is_what_model_construct_builds():
    msg = Message.from_input("sp", "s1", MessageIn(seq=3, role="user", speaker="Ann",
                                                   content="hello", at=AT))
    _same(msg, Message.model_construct(**msg.__dict__))
    assert msg.ref == "message:s1:3" and msg.model_copy(update={"seq": 4}).seq == 4


def test_a_message_doc_is_what_model_construct_builds_and_runs_post_init():
    msg = Message.from_input("sp", "s1", MessageIn(seq=0, role="user", content="hi", at=AT))
    doc = message_doc(msg)
    _same(doc, IndexDoc.model_construct(**doc.__dict__))
    assert doc.model_copy(update={"vector": [0.5]}).vector == [0.5]
    with pytest.raises(ValueError, match="end before start"):  # model_post_init still runs
        trusted(IndexDoc, id="x", space="s", kind="message", text="t", start=2.0, end=1.0,
                status="active", importance=5, vector=None, context_text=None)
