"""chalicelib.usecases.merge: the pure apply_instructions, the offline near-duplicate merger (with the
real e5 model for meaning) and the merge job's every-N trigger, versions and indexes."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from pydantic import ValidationError

from chalicelib.domain.merge import EventChanges, MergeInstruction, apply_instructions
from chalicelib.domain.models import Event, Source, When
from chalicelib.domain.records import MergeState
from chalicelib.ports import SearchFilter
from chalicelib.usecases import events as events_uc
from chalicelib.usecases import jobs
from chalicelib.usecases.extract import extract_session
from chalicelib.usecases.jobs import merge_job
from chalicelib.usecases.merge import merge_space
from chalicelib.usecases.merge.llm import LLMMerger, MergeOut
from chalicelib.usecases.merge.offline import OfflineMerger
from chalicelib.usecases.stats import space_stats
from tests.unit.conftest import SPACE, T0

NOW = T0 + timedelta(hours=5)


def day(offset: int = 0) -> When:
    start = T0.replace(hour=0, minute=0) + timedelta(days=offset)
    return When(start=start, end=start + timedelta(days=1), granularity="day")


def ev(eid: str, summary: str, *, seq: int = 0, session: str = "c1", who=("Mel",),
       when: When | None = None, importance: int = 5, plan: bool = False,
       status: str = "active") -> Event:
    return Event(id=eid, space=SPACE, title=summary[:20], summary=summary, when=when or day(),
                 importance=importance, participants=list(who), plan=plan, status=status,
                 sources=[Source(session=session, seq_start=seq, seq_end=seq)],
                 created_at=T0, updated_at=T0)


def ins(action: str, eid: str | None = None, merge_from=(), **fields) -> MergeInstruction:
    return MergeInstruction(action=action, id=eid, merge_from=list(merge_from),
                            fields=EventChanges(**fields))


A = ev("ev_a", "Mel adopted a puppy named Luna.", seq=1)
B = ev("ev_b", "Mel adopted Luna, a puppy, from the shelter.", seq=7, session="c2")
C = ev("ev_c", "Mel signed up for a pottery class.", seq=3)
WINDOW = [A, B, C]


class TestApplyInstructions:
    def test_keep_and_empty_change_nothing(self):
        result = apply_instructions(WINDOW, [ins("keep", "ev_a")], NOW)
        assert (result.created, result.updated, result.superseded, result.skipped) == (
            [], [], [], [])
        assert apply_instructions(WINDOW, [], NOW).changes == 0

    def test_update_sets_fields_keeps_id_and_version_and_only_grows_sources(self):
        result = apply_instructions(WINDOW, [
            ins("update", "ev_b", merge_from=["ev_a"], summary="Mel adopted Luna, a puppy.",
                importance=8, sources=[Source(session="c9", seq_start=2, seq_end=2)]),
        ], NOW)
        (up,) = result.updated
        assert (up.id, up.version, up.summary, up.importance) == (
            "ev_b", 1, "Mel adopted Luna, a puppy.", 8)
        assert [(s.session, s.seq_start) for s in up.sources] == [("c2", 7), ("c9", 2), ("c1", 1)]
        assert (up.created_at, up.updated_at) == (T0, NOW)
        assert (result.created, result.superseded) == ([], [])

    def test_an_update_that_changes_nothing_is_not_a_change(self):
        result = apply_instructions(WINDOW, [ins("update", "ev_a", summary=A.summary)], NOW)
        assert result.updated == []

    def test_ids_are_immutable(self):
        with pytest.raises(ValidationError):
            EventChanges(id="ev_new")
        with pytest.raises(ValidationError):
            EventChanges(status="active")

    def test_delete_supersedes_and_never_removes(self):
        result = apply_instructions(WINDOW, [ins("update", "ev_a", merge_from=["ev_c"]),
                                             ins("delete", "ev_c")], NOW)
        (gone,) = result.superseded
        assert (gone.id, gone.status, gone.summary, gone.updated_at) == (
            "ev_c", "superseded", C.summary, NOW)
        assert C.status == "active"  # pure: the input is untouched

    def test_a_delete_that_would_leave_evidence_uncited_is_skipped(self):
        result = apply_instructions(WINDOW, [ins("delete", "ev_c")], NOW)
        assert result.superseded == []
        assert result.skipped == ["delete ev_c: its evidence would be cited by no active "
                                  "event; merge it into the event that replaces it instead"]

    def test_unknown_ids_are_skipped(self):
        result = apply_instructions(WINDOW, [
            ins("update", "ev_zzz", summary="x"), ins("delete", "nope"), ins("keep", "ev_q"),
            ins("update", "ev_a", merge_from=["ev_missing"], importance=9),
        ], NOW)
        assert [e.id for e in result.updated] == ["ev_a"]
        assert result.updated[0].sources == A.sources
        assert result.skipped == [
            "update 'ev_zzz': unknown id", "delete 'nope': unknown id", "keep 'ev_q': unknown id",
            "update ev_a: unknown merge_from 'ev_missing'"]

    def test_update_then_delete_is_deleted(self):
        result = apply_instructions(WINDOW, [ins("update", "ev_a", importance=9),
                                             ins("update", "ev_b", merge_from=["ev_a"]),
                                             ins("delete", "ev_a")], NOW)
        assert [e.id for e in result.updated] == ["ev_b"]
        assert [(e.id, e.status, e.importance) for e in result.superseded] == [
            ("ev_a", "superseded", 9)]

    def test_delete_then_update_or_delete_again_is_skipped(self):
        result = apply_instructions(WINDOW, [ins("delete", "ev_a"), ins("update", "ev_a",
                                                                        importance=9),
                                             ins("delete", "ev_a"),
                                             ins("update", "ev_b", merge_from=["ev_a"])], NOW)
        assert [e.importance for e in result.superseded] == [5]
        assert [e.id for e in result.updated] == ["ev_b"]
        assert result.skipped == ["update ev_a: already superseded",
                                  "delete ev_a: already superseded"]

    def test_add_without_id_gets_a_deterministic_id(self):
        add = ins("add", summary="Mel adopted Luna from the shelter.", merge_from=["ev_a", "ev_b"])
        first = apply_instructions(WINDOW, [add], NOW).created[0]
        again = apply_instructions(WINDOW, [add], NOW + timedelta(days=1)).created[0]
        assert first.id == again.id and first.id.startswith("ev_")
        other = ins("add", summary="Something else entirely.", merge_from=["ev_a"])
        assert apply_instructions(WINDOW, [other], NOW).created[0].id != first.id
        # built from its donors: their span, sources, participants and top importance
        assert first.when == day() and first.participants == ["Mel"]
        assert [(s.session, s.seq_start) for s in first.sources] == [("c1", 1), ("c2", 7)]
        assert (first.version, first.status, first.created_at) == (1, "active", NOW)

    def test_add_keeps_a_fresh_id_but_never_reuses_one(self):
        fresh = ins("add", "ev_fresh", summary="A new fact.", merge_from=["ev_a"])
        assert apply_instructions(WINDOW, [fresh], NOW).created[0].id == "ev_fresh"
        clash = ins("add", "ev_b", summary="A new fact.", merge_from=["ev_a"])
        created = apply_instructions(WINDOW, [clash], NOW).created[0]
        assert created.id != "ev_b" and created.id.startswith("ev_")

    def test_add_needs_a_date_and_evidence(self):
        result = apply_instructions(WINDOW, [ins("add", summary="Floating fact.")], NOW)
        assert result.created == [] and result.skipped == ["add: needs when, sources"]
        dated = ins("add", summary="Cited.", when=day(2),
                    sources=[Source(session="c1", seq_start=4, seq_end=4)])
        assert apply_instructions(WINDOW, [dated], NOW).created[0].when == day(2)

    def test_add_then_delete_creates_nothing(self):
        result = apply_instructions(WINDOW, [ins("add", "ev_tmp", summary="x",
                                                 merge_from=["ev_a"]),
                                             ins("delete", "ev_tmp")], NOW)
        assert result.changes == 0

    def test_space_comes_from_the_events_or_is_given(self):
        add = ins("add", summary="x", when=day(), sources=[Source(session="c", seq_start=0,
                                                                   seq_end=0)])
        assert apply_instructions([], [add], NOW).skipped == ["add: needs space"]
        assert apply_instructions([], [add], NOW, space="sp2").created[0].space == "sp2"


class TestOfflineMergerRules:
    """With the hash embedder, identical summaries have similarity 1: only the other
    conditions decide."""

    def merger(self, services):
        return OfflineMerger(services.embedder, 0.95)

    def test_identical_fact_same_day_same_person_is_joined(self, services):
        a = ev("ev_1", "Mel adopted a puppy.", seq=1, importance=4)
        b = ev("ev_2", "Mel adopted a puppy.", seq=2, session="c2", importance=7)
        out = self.merger(services).instructions([a, b], {"ev_2"})
        # same length of text: the more important one is kept
        assert [(i.action, i.id) for i in out] == [("update", "ev_2"), ("delete", "ev_1")]
        assert out[0].merge_from == ["ev_1"] and out[0].fields.importance == 7

    @pytest.mark.parametrize("change", [
        {"who": ("Caroline",)}, {"when": day(3)}, {"plan": True}])
    def test_different_people_days_or_plan_status_stay_apart(self, services, change):
        a = ev("ev_1", "Mel adopted a puppy.", seq=1)
        b = ev("ev_2", "Mel adopted a puppy.", seq=2, **change)
        assert self.merger(services).instructions([a, b], {"ev_2"}) == []

    def test_only_pairs_with_a_new_event_are_considered(self, services):
        a = ev("ev_1", "Mel adopted a puppy.", seq=1)
        b = ev("ev_2", "Mel adopted a puppy.", seq=2)
        assert self.merger(services).instructions([a, b], {"ev_3"}) == []
        assert len(self.merger(services).instructions([a, b])) == 2  # none new: all pairs

    def test_the_richer_text_is_kept(self, services, monkeypatch):
        short = ev("ev_1", "Mel adopted Luna.", seq=1, importance=8)
        long = ev("ev_2", "Mel adopted Luna, a puppy, from the animal shelter.", seq=2)
        merger = self.merger(services)
        monkeypatch.setattr(merger, "similarity", 0.0)
        out = merger.instructions([short, long], {"ev_2"})
        assert [(i.action, i.id) for i in out] == [("update", "ev_2"), ("delete", "ev_1")]
        assert out[0].fields.importance == 8


PARAPHRASES = [  # one fact, told in three chats on one day
    (0, "I adopted a puppy named Luna from the animal shelter today."),
    (3, "Today I adopted Luna, a puppy, from the shelter."),
    (6, "I got a puppy called Luna from the local animal shelter today."),
]
DISTINCT = "I took Luna to the vet for her first check-up this evening."


@pytest.mark.e5
class TestOfflineMergerWithE5:
    def test_three_paraphrases_in_three_sessions_become_one_event_with_all_sources(
            self, e5_services, put):
        services = e5_services
        services.clock = lambda: NOW
        services.settings.merge_every = 3
        for n, (hour, text) in enumerate(PARAPHRASES, 1):
            items = [(0, "user", "Mel", text), (1, "assistant", "Aki", "Congratulations!")]
            if n == 3:
                items.append((2, "user", "Mel", DISTINCT))
            put(f"s{n}", items, base=T0.replace(hour=9 + hour))
            extract_session(services, SPACE, f"s{n}", NOW)
        events = [e for e in services.store.list_events(SPACE).events if e.kind == "event"]
        assert len(events) == 4
        summaries = [e.summary for e in sorted(events, key=lambda e: e.sources[0].session)]
        vec = services.embedder.embed_passages(summaries)
        sims = vec @ vec.T
        # e5 really finds the paraphrases alike, and the vet visit not alike enough
        paraphrase_sims = [sims[0, 1], sims[0, 2], sims[1, 2]]
        distinct = next(i for i, s in enumerate(summaries) if "vet" in s)
        assert min(paraphrase_sims) >= services.settings.merge_similarity > float(
            np.max(np.delete(sims[distinct], distinct)))

        result = merge_job(services, NOW)
        assert (result.job, result.events) == ("merge", 3)  # 1 update + 2 superseded
        active = [e for e in services.store.list_events(SPACE).events if e.kind == "event"]
        assert len(active) == 2
        (luna,) = [e for e in active if "vet" not in e.summary]
        assert sorted(s.session for s in luna.sources) == ["s1", "s2", "s3"]
        assert luna.summary == max(summaries[:3], key=len)  # the richer text
        assert luna.version == 2
        gone = services.store.list_events(SPACE, statuses=("superseded",)).events
        assert len(gone) == 2 and all(len(events_uc.history(services, SPACE, e.id)) == 2
                                      for e in gone)
        # the indexes follow: superseded events are no longer found
        hits = services.keywords.keyword_search(SPACE, "puppy Luna shelter", 10,
                                                SearchFilter(kinds=("event",)))
        found = {h.id for h in hits}
        assert luna.ref in found and not found & {e.ref for e in gone}


class TestMergeJob:
    def put_facts(self, put, services, session, facts, hour):
        put(session, [(i, "user", "Mel", f) for i, f in enumerate(facts)],
            base=T0.replace(hour=hour))
        return extract_session(services, SPACE, session, NOW)

    def test_runs_after_every_n_new_events_per_space(self, services, put):
        services.settings.merge_every = 5
        dup = "I adopted a puppy named Luna from the animal shelter."
        self.put_facts(put, services, "s1", [dup, "I started a pottery class downtown.",
                                             "I painted a sunrise over the lake."], 9)
        self.put_facts(put, services, "s2", ["I ran a charity race for mental health."], 10)
        first = merge_job(services, NOW)
        assert (first.events, first.detail) == (0, {"spaces": {}})
        assert services.store.get_record(MergeState, SPACE).pending == 4
        assert space_stats(services, SPACE)["merge"]["pending"] == 4

        self.put_facts(put, services, "s3", [dup], 11)  # the 5th new event: a duplicate
        second = jobs.run_job("merge", services, NOW)
        assert second.detail["spaces"][SPACE] == {
            "new": 5, "merged": True, "created": 0, "updated": 1, "superseded": 1,
            "merger": "offline"}
        active = [e for e in services.store.list_events(SPACE).events if e.kind == "event"]
        assert len(active) == 4
        (luna,) = [e for e in active if "Luna" in e.summary]
        assert [s.session for s in luna.sources] == ["s1", "s3"]
        state = services.store.get_record(MergeState, SPACE)
        assert (state.pending, state.runs) == (0, 1)

        assert merge_job(services, NOW).detail == {"spaces": {}}  # nothing new since
        stats = space_stats(services, SPACE)
        assert stats["events"] == {"active": 4, "archived": 0, "superseded": 1, "total": 5}
        assert (stats["sessions"], stats["messages"]) == (3, 5)
        assert stats["llm"]["total"]["calls"] == 0 and stats["merge"]["runs"] == 1

    def test_an_unchanged_space_is_not_read_again(self, services, put, monkeypatch):
        from chalicelib.usecases import merge as merge_mod
        self.put_facts(put, services, "s1", ["I started a pottery class downtown."], 9)
        assert merge_job(services, NOW).detail == {"spaces": {}}
        reads = []
        real = merge_mod.iter_events
        monkeypatch.setattr(merge_mod, "iter_events",
                            lambda store, space: reads.append(space) or real(store, space))
        merge_job(services, NOW)
        assert reads == []  # nothing was extracted since: the events are not listed
        self.put_facts(put, services, "s2", ["I ran a charity race for mental health."], 10)
        merge_job(services, NOW)
        assert reads == [SPACE]
        assert services.store.get_record(MergeState, SPACE).pending == 2

    def test_force_merges_whatever_is_there(self, services, put):
        dup = "I adopted a puppy named Luna from the animal shelter."
        self.put_facts(put, services, "s1", [dup], 9)
        self.put_facts(put, services, "s2", [dup], 10)
        assert merge_space(services, SPACE, NOW)["merged"] is False
        summary = merge_space(services, SPACE, NOW, force=True)
        assert (summary["updated"], summary["superseded"]) == (1, 1)

    def test_a_concurrent_edit_wins_over_the_merge(self, services, put, monkeypatch):
        dup = "I adopted a puppy named Luna from the animal shelter."
        self.put_facts(put, services, "s1", [dup], 9)
        self.put_facts(put, services, "s2", [dup], 10)
        real = OfflineMerger.instructions

        def edit_first(self, window, new_ids=frozenset()):
            out = real(self, window, new_ids)
            victim = services.store.get_event(SPACE, out[1].id)  # edited meanwhile
            services.store.update_event(victim.model_copy(update={"importance": 9}),
                                        victim.version)
            return out

        monkeypatch.setattr(OfflineMerger, "instructions", edit_first)
        summary = merge_space(services, SPACE, NOW, force=True)
        assert (summary["updated"], summary["superseded"]) == (1, 0)
        assert len([e for e in services.store.list_events(SPACE).events
                    if e.kind == "event"]) == 2  # the edited one stays


def test_defaults(services):
    assert (services.settings.merge_every, services.settings.merge_window,
            services.settings.merge_similarity) == (5, 20, 0.95)


class TestLLMMergerConvert:
    def test_handles_synonyms_dates_and_unknowns(self):
        out = MergeOut(instructions=[
            {"action": "Merge", "id": "e2", "summary": "  Mel adopted Luna.  ",
             "merge": "E1", "date": "2026-06-15", "importance": 12},
            {"action": "remove", "id": "E1"},
            {"action": "update", "id": "E7", "summary": "ghost"},
            {"action": "update", "id": "E3", "date": "2031-01-01", "title": "Pottery"},
            {"action": "add", "summary": "Combined.", "merge": ["E1", "E2"], "date": "1999-01-01"},
        ])
        got = LLMMerger.convert(out, WINDOW)
        assert [(i.action, i.id, i.merge_from) for i in got] == [
            ("update", "ev_b", ["ev_a"]), ("delete", "ev_a", []), ("update", "ev_c", []),
            ("add", None, ["ev_a", "ev_b"])]
        assert (got[0].fields.summary, got[0].fields.importance, got[0].fields.when) == (
            "Mel adopted Luna.", 10, day())
        assert got[2].fields.when is None and got[2].fields.title == "Pottery"  # no time travel
        assert got[3].fields.when == day()  # an add outside its donors' span takes the span

    def test_unknown_action_is_a_schema_error(self):
        with pytest.raises(ValidationError):
            MergeOut(instructions=[{"action": "explode", "id": "E1"}])
