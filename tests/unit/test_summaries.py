"""Session summaries and their folds (chalicelib/usecases/extract/summaries.py): a summary
once a session has enough uncovered events (never of one event), citing what it retells,
three summaries of a level folded into one of the next, ids that make a retry write nothing new, the session's language, the LLM path with
its fallback, and summaries kept out of search, merge and the export timeline."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from chalicelib.config import Settings
from chalicelib.domain.models import Event, MessageIn, PutMessagesRequest
from chalicelib.domain.records import SummaryFold
from chalicelib.ports import iter_events
from chalicelib.usecases import events as events_uc
from chalicelib.usecases import export, ingest
from chalicelib.usecases.extract import extract_session
from chalicelib.usecases.extract.summaries import FOLD_SIZE, MAX_TEXT_CHARS, level_of
from chalicelib.usecases.merge import merge_space
from chalicelib.usecases.stats import space_stats
from tests.conftest import make_services
from tests.extract_double import OneEventPerStatement
from tests.llm_double import ChatDouble
from tests.unit.conftest import SPACE, T0

# Three statements, three events a session (OneEventPerStatement, below): the default
# ANNALS_SUMMARY_MIN_EVENTS, so each gets a summary.
EN = [
    (0, "user", "Mel", "I adopted a ginger cat named Biscuit from the shelter today."),
    (1, "assistant", "Aria", "Lovely!"),
    (2, "user", "Mel", "We are planning a hiking trip to the Alps with my brother Sam."),
    (3, "assistant", "Aria", "Sounds fun."),
    (4, "user", "Mel", "I also started cello lessons with a teacher downtown."),
]
ZH = [
    (0, "user", "小明", "我今天在救助站领养了一只橘猫，取名奶糖。"),
    (1, "assistant", "Aki", "恭喜！"),
    (2, "user", "小明", "下个月我要和哥哥去爬黄山。"),
    (3, "assistant", "Aki", "真好。"),
    (4, "user", "小明", "我上周开始跟老师学大提琴了。"),
]
BERLIN = [  # three one-line sessions about one move
    "I am moving to Berlin next month for a new job.",
    "I signed the lease for a flat in Berlin today.",
    "I booked the movers for my Berlin flat.",
]


def per_statement(services):
    services.extractor = OneEventPerStatement()
    return services


@pytest.fixture(autouse=True)
def _per_statement(services):
    per_statement(services)


def stub_services(path, **overrides):
    return per_statement(make_services(path, store="memory", **overrides))


def all_events(services, statuses=("active",)) -> list[Event]:
    return list(iter_events(services.store, SPACE, statuses))


def summaries(services, level: int | None = None) -> list[Event]:
    return [e for e in all_events(services) if e.kind == "summary"
            and (level is None or level_of(e) == level)]


def nine_sessions(services, put) -> None:
    for day in range(9):
        items = ZH if day % 3 == 2 else EN
        session = f"s{day}"
        put(session, items, base=T0 + timedelta(days=day))
        extract_session(services, SPACE, session, T0 + timedelta(days=day, hours=1))


def cited(services, event: Event) -> set[tuple[str, int]]:
    return {(s.session, q) for s in event.sources for q in range(s.seq_start, s.seq_end + 1)}


class TestSessionSummaries:
    def test_a_summary_per_session_citing_its_events_messages(self, services, put):
        nine_sessions(services, put)
        level_one = summaries(services, 1)
        assert sorted(s.sources[0].session for s in level_one) == [f"s{d}" for d in range(9)]
        for summary in level_one:
            session = summary.sources[0].session
            events = [e for e in all_events(services) if e.kind == "event"
                      and e.sources[0].session == session]
            assert cited(services, summary) == set().union(*(cited(services, e)
                                                             for e in events))
            assert {"summary", "level:1"} <= set(summary.tags)
            assert summary.when.start == min(e.when.start for e in events)
            assert summary.when.end == max(e.when.end for e in events)
            assert len(summary.summary) <= MAX_TEXT_CHARS
            assert 3 <= summary.importance <= 7

    def test_folds_three_summaries_into_the_next_level(self, services, put):
        nine_sessions(services, put)
        level_two = summaries(services, 2)
        assert len(level_two) == 3
        (level_three,) = summaries(services, 3)
        folds = {f.key: f for f in services.store.list_records(SummaryFold, SPACE)}
        assert set(folds) == {e.id for e in [*level_two, level_three]}
        by_id = {e.id: e for e in summaries(services)}
        for fold in [*level_two, level_three]:
            members = [by_id[i] for i in folds[fold.id].folds]
            assert len(members) == FOLD_SIZE
            assert {level_of(m) for m in members} == {level_of(fold) - 1}
            assert cited(services, fold) == set().union(*(cited(services, m)
                                                          for m in members))
        # every level-1 summary is folded exactly once
        folded = [i for f in folds.values() if f.level == 2 for i in f.folds]
        assert sorted(folded) == sorted(e.id for e in summaries(services, 1))

    def test_every_summary_cites_messages_that_exist(self, services, put):
        nine_sessions(services, put)
        for summary in summaries(services):
            keys = sorted(cited(services, summary))
            found = services.store.load_messages(SPACE, keys)
            assert len(found) == len(keys) > 0

    def test_extracting_again_writes_nothing_new(self, services, put):
        nine_sessions(services, put)
        before = {e.id: e.version for e in all_events(services, ("active", "superseded"))}
        for day in range(9):
            extract_session(services, SPACE, f"s{day}", T0 + timedelta(days=10))
        after = {e.id: e.version for e in all_events(services, ("active", "superseded"))}
        assert after == before

    def test_a_later_batch_summarises_what_earlier_ones_left_uncovered(self, services, put):
        put("c1", EN[:3])  # two events: below the threshold, no summary
        extract_session(services, SPACE, "c1", T0 + timedelta(hours=1))
        assert summaries(services) == []
        put("c1", EN[3:])  # the third: the three are summarised together
        extract_session(services, SPACE, "c1", T0 + timedelta(hours=2))
        (summary,) = summaries(services)
        assert [(s.seq_start, s.seq_end) for s in summary.sources] == [(0, 0), (2, 2), (4, 4)]
        # a batch of one more event: covered by nothing, but one is not enough
        put("c1", [(5, "user", "Mel", "My sister Jo is getting married in Lisbon in May.")])
        extract_session(services, SPACE, "c1", T0 + timedelta(hours=3))
        assert summaries(services) == [summary]

    def test_the_outcome_does_not_depend_on_how_the_batches_fell(self, tmp_path):
        one = stub_services(tmp_path / "one")
        many = stub_services(tmp_path / "many")
        put_items(one, "c1", EN)
        extract_session(one, SPACE, "c1", T0 + timedelta(hours=1))
        for i in range(0, len(EN), 2):
            put_items(many, "c1", EN[i:i + 2])
            extract_session(many, SPACE, "c1", T0 + timedelta(hours=1 + i))
        ids = {e.id for e in summaries(one)}
        assert len(ids) == 1 and {e.id for e in summaries(many)} == ids

    def test_one_line_sessions_get_no_summary(self, services, put):
        for day, text in enumerate(BERLIN):
            put(f"b{day}", [(0, "user", "Mel", text)], base=T0 + timedelta(days=day))
            extract_session(services, SPACE, f"b{day}", T0 + timedelta(days=day, hours=1))
        listed = events_uc.list_events(services, SPACE).events
        assert len(listed) == len(BERLIN) and {e.kind for e in listed} == {"event"}
        assert summaries(services) == []

    def test_the_threshold_is_a_setting_never_below_two(self, tmp_path):
        two = stub_services(tmp_path / "two", summary_min_events=2)
        put_items(two, "c1", EN[:3])  # two events
        extract_session(two, SPACE, "c1", T0 + timedelta(hours=1))
        (summary,) = summaries(two)
        assert [(s.seq_start, s.seq_end) for s in summary.sources] == [(0, 0), (2, 2)]
        with pytest.raises(ValidationError):
            Settings(summary_min_events=1, _env_file=None)
        assert Settings(_env_file=None).summary_min_events == 3

    def test_languages(self, services, put):
        put("en", EN)
        extract_session(services, SPACE, "en", T0 + timedelta(hours=1))
        put("zh", ZH, base=T0 + timedelta(days=1))
        extract_session(services, SPACE, "zh", T0 + timedelta(days=1, hours=1))
        by_session = {s.sources[0].session: s for s in summaries(services)}
        assert by_session["en"].title == "Session summary: 2026-06-15"
        assert "Biscuit" in by_session["en"].summary
        assert by_session["zh"].title.startswith("会话摘要：")
        assert "奶糖" in by_session["zh"].summary

    def test_an_edit_supersedes_the_summary_and_the_session_stays_covered(self, services, put):
        put("c1", EN)
        extract_session(services, SPACE, "c1", T0 + timedelta(hours=1))
        (old,) = summaries(services)
        put("c1", [(2, "user", "Mel", "We are planning a trip to the Dolomites with Sam.")])
        extract_session(services, SPACE, "c1", T0 + timedelta(hours=2))
        assert services.store.get_event(SPACE, old.id).status == "superseded"
        (new,) = summaries(services)
        assert "Dolomites" in new.summary and "Biscuit" in new.summary
        assert {(s.seq_start, s.seq_end) for s in new.sources} == {(0, 0), (2, 2), (4, 4)}

    def test_an_edit_that_leaves_too_few_events_leaves_them_uncovered(self, services, put):
        put("c1", EN)
        extract_session(services, SPACE, "c1", T0 + timedelta(hours=1))
        (old,) = summaries(services)
        put("c1", [(4, "user", "Mel", "Thanks!")])  # the cello lessons were never said
        extract_session(services, SPACE, "c1", T0 + timedelta(hours=2))
        assert services.store.get_event(SPACE, old.id).status == "superseded"
        assert summaries(services) == []
        put("c1", EN[4:])  # said again after all: the same events, the old summary revived
        extract_session(services, SPACE, "c1", T0 + timedelta(hours=3))
        (back,) = summaries(services)
        assert back.id == old.id and back.version == old.version + 2


class TestKeptApart:
    def test_not_searchable_not_merged_not_counted_as_events(self, services, put):
        put("c1", EN)
        extract_session(services, SPACE, "c1", T0 + timedelta(hours=1))
        (summary,) = summaries(services)
        hits = services.keywords.keyword_search(SPACE, "Biscuit ginger cat shelter", 50)
        assert summary.ref not in {h.id for h in hits} and hits
        result = merge_space(services, SPACE, T0 + timedelta(hours=2), force=True)
        assert services.store.get_event(SPACE, summary.id).version == 1, result
        stats = space_stats(services, SPACE)
        events = [e for e in all_events(services) if e.kind == "event"]
        assert stats["events"]["active"] == len(events)
        assert stats["summaries"] == 1

    def test_export_shows_summaries_in_their_own_section(self, services, put):
        put("c1", EN)
        extract_session(services, SPACE, "c1", T0 + timedelta(hours=1))
        text = export.export_markdown(services, SPACE)
        timeline, _, section = text.partition("## Summaries")
        assert "Session summary" not in timeline
        assert "- Session summary: 2026-06-15 — " in section


# ------------------------------------------------------------------ the LLM path


@pytest.fixture
def double():
    with ChatDouble() as d:
        yield d


def llm_services(tmp_path, double):
    return make_services(tmp_path, store="memory", llm="openai", llm_base_url=double.url,
                         llm_api_key="sk-sum", llm_model="sum-model", llm_timeout_seconds=5,
                         llm_max_retries=0)


def put_items(services, session: str, items) -> None:
    ingest.put_messages(services, SPACE, session, PutMessagesRequest(messages=[
        MessageIn(seq=seq, role=role, speaker=who, content=text, at=T0 + timedelta(minutes=seq))
        for seq, role, who, text in items]))


def put_en(services, session: str = "c1") -> None:
    put_items(services, session, EN)


EXTRACTED = {"events": [
    {"title": "Biscuit adopted", "summary": "Mel adopted a ginger cat named Biscuit",
     "date": "2026-06-15", "importance": 7, "participants": ["Mel"], "sources": [0]},
    {"title": "Alps trip planned", "summary": "Mel plans a hiking trip to the Alps with Sam",
     "date": "2026-06-15", "importance": 6, "participants": ["Mel", "Sam"], "sources": [2]},
    {"title": "Cello lessons", "summary": "Mel started cello lessons downtown",
     "date": "2026-06-15", "importance": 5, "participants": ["Mel"], "sources": [4]}]}


class TestWithAnLLM:
    def test_the_model_writes_the_text_and_usage_is_kept(self, tmp_path, double):
        services = llm_services(tmp_path, double)
        double.reply_json(EXTRACTED)
        double.reply_json({"summary": "Mel adopted Biscuit, a ginger cat."})
        put_en(services)
        extract_session(services, SPACE, "c1", T0 + timedelta(hours=1))
        (summary,) = summaries(services)
        assert summary.summary == "Mel adopted Biscuit, a ginger cat."
        assert summary.title == "Session summary: 2026-06-15"
        prompt = double.requests[1]["messages"]
        assert "Biscuit adopted" in prompt[1]["content"] and "summary" in prompt[0]["content"]
        usage = space_stats(services, SPACE)["llm"]["tasks"]["summary"]
        assert (usage["calls"], usage["failures"]) == (1, 0)
        # a retry finds it written: no second call
        extract_session(services, SPACE, "c1", T0 + timedelta(hours=2))
        assert len(double.requests) == 2

    def test_a_failure_falls_back_to_the_extractive_text(self, tmp_path, double):
        services = llm_services(tmp_path, double)
        double.reply_json(EXTRACTED)
        double.reply_error(500, "boom")
        put_en(services)
        extract_session(services, SPACE, "c1", T0 + timedelta(hours=1))
        (summary,) = summaries(services)
        assert summary.summary == ("Mel adopted a ginger cat named Biscuit; Mel plans a hiking "
                                   "trip to the Alps with Sam; Mel started cello lessons "
                                   "downtown.")
        usage = space_stats(services, SPACE)["llm"]["tasks"]["summary"]
        assert (usage["calls"], usage["failures"]) == (0, 1)


class TestRetries:
    def test_a_failure_at_any_summary_write_is_retried_to_the_same_state(self, tmp_path):
        from tests.unit.conftest import message

        def state(services):
            return sorted((e.id, e.version, e.status, e.summary)
                          for e in all_events(services, ("active", "superseded")))

        def run(services, fail_nth: int | None = None) -> None:
            real, calls = services.store.create_event, []

            def flaky(event):
                if event.kind == "summary":
                    calls.append(event.id)
                    if len(calls) == fail_nth:
                        raise RuntimeError("injected")
                return real(event)

            services.store.create_event = flaky
            for day in range(3):
                msgs = [message(q, r, w, c, session=f"s{day}",
                                at=T0 + timedelta(days=day, minutes=q)) for q, r, w, c in EN]
                services.store.upsert_messages(SPACE, f"s{day}", msgs, T0)
                for _ in range(2):  # a failed try is retried once
                    try:
                        extract_session(services, SPACE, f"s{day}",
                                        T0 + timedelta(days=day, hours=1))
                        break
                    except RuntimeError:
                        continue

        clean = stub_services(tmp_path / "clean")
        run(clean)
        expected = state(clean)
        assert len([e for e in expected if e[0] in {s.id for s in summaries(clean)}]) == 4
        for nth in (1, 2, 3, 4):
            faulty = stub_services(tmp_path / f"f{nth}")
            run(faulty, nth)
            assert state(faulty) == expected, nth
