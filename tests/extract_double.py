"""An extractor whose events tests can count on: one per user statement, whatever the
offline extractor's own rules (tested in tests/unit/test_offline_extractor.py and beside it)
make of the same chat. Set it as `services.extractor`."""

from __future__ import annotations

from datetime import timedelta

from chalicelib.domain.models import EventDraft, Source, When
from chalicelib.domain.textproc import is_cjk
from chalicelib.ports import Reading


class OneEventPerStatement:
    """One event per user statement (three words or more; six characters in Chinese), dated
    the day it was said: the event counts these tests are about, whatever the offline
    extractor's own rules (tested elsewhere) make of the same chat."""

    name = "per-statement"

    def read(self, messages, ctx) -> Reading:
        return Reading(events=self.events(messages))

    def events(self, messages) -> list[EventDraft]:
        out = []
        for m in messages:
            long_enough = len(m.content) >= 6 if is_cjk(m.content) else \
                len(m.content.split()) >= 3
            if m.role != "user" or not long_enough:
                continue
            day = m.at.replace(hour=0, minute=0, second=0, microsecond=0)
            out.append(EventDraft(
                title=m.content[:40], summary=m.content, participants=[m.speaker],
                when=When(start=day, end=day + timedelta(days=1), granularity="day"),
                sources=[Source(session=m.session, seq_start=m.seq, seq_end=m.seq)]))
        return out
