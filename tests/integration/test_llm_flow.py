"""The LLM path end to end, against the local OpenAI-compatible double (real SDK, real wire
format): six extraction batches through extract_session, the merge job every 5 new events
with LLM instructions (update + delete), every version in history, JSON retries, the offline
fallback and usage accounting that matches what the double billed."""

from __future__ import annotations

from datetime import timedelta

from chalicelib.ports import ExtractionContext
from chalicelib.usecases import events as events_uc
from chalicelib.usecases import jobs
from chalicelib.usecases.extract import extract_session
from chalicelib.usecases.extract.llm import LLMExtractor
from chalicelib.usecases.merge import merge_space
from chalicelib.usecases.stats import space_stats
from tests.conftest import make_services
from tests.llm_double import Reply
from tests.unit.conftest import SPACE, T0

SESSION = "chat"


def put_batch(services, day: int, items):
    """Batch `day` (1…6) is sent on 2026-06-(14+day) from 10:00, a minute per message."""
    from chalicelib.domain.models import MessageIn, PutMessagesRequest
    from chalicelib.usecases import ingest

    base = T0 + timedelta(days=day - 1)
    ingest.put_messages(services, SPACE, SESSION, PutMessagesRequest(messages=[
        MessageIn(seq=seq, role=role, speaker=who, content=text,
                  at=base + timedelta(minutes=i))
        for i, (seq, role, who, text) in enumerate(items)]))
    return base + timedelta(hours=1)  # when the batch is extracted


def ev(title, summary, date, sources, importance=5, plan=False, who=("小明",)):
    return {"title": title, "summary": summary, "date": date, "importance": importance,
            "participants": list(who), "tags": [], "sources": sources, "plan": plan}


BATCHES = [
    ([(0, "user", "小明", "我昨天在救助站领养了一只三个月大的橘猫，取名奶糖。"),
      (1, "assistant", "Aki", "恭喜！奶糖这个名字真可爱。")],
     {"events": [ev("领养奶糖", "小明在救助站领养了三个月大的橘猫奶糖", "2026-06-14", [0], 8)]}),
    ([(2, "user", "小明", "今天带奶糖去体检了。另外我下周六要去上海出差。"),
      (3, "assistant", "Aki", "体检顺利吗？出差要注意休息。")],
     {"events": [ev("奶糖体检", "小明带奶糖去做了体检", "2026-06-16", [2], 5),
                 ev("上海出差计划", "小明计划下周六去上海出差", "2026-06-27", [2], 6, plan=True)]}),
    ([(4, "user", "小明", "体检结果出来了，奶糖一切正常，就是有点瘦。我给它买了高蛋白猫粮。"),
      (5, "assistant", "Aki", "那就放心了。")],
     {"events": [ev("体检结果", "奶糖的体检结果一切正常，只是有点瘦", "2026-06-17", [4], 5),
                 # a batch's own seqs only: an answer citing one outside it (99) is refused
                 # whole and the rules read the batch (tests/unit/test_llm_extractor.py)
                 ev("买猫粮", "小明给奶糖买了高蛋白猫粮", "2026-06-17", [4], 4)]}),
    ([(6, "user", "小明", "上海出差取消了，公司改成线上开会。"),
      (7, "assistant", "Aki", "那你可以在家多陪陪奶糖。")],
     # dated a week ahead without being a plan: the check re-dates it to the message day
     {"events": [ev("出差取消", "小明的上海出差取消了，改为线上会议", "2026-06-25", [6], 6)]}),
    ([(8, "user", "小明", "今天开始教奶糖用猫砂盆。我还报名了周末的摄影课。"),
      (9, "assistant", "Aki", "加油！")],
     {"events": [ev("训练猫砂盆", "小明开始教奶糖使用猫砂盆", "2026-06-19", [8], 4),
                 ev("报名摄影课", "小明报名了周末的摄影课", "2026-06-19", [8], 5)]}),
    ([(10, "user", "小明", "奶糖今天第一次自己用了猫砂盆！周日我要和朋友小红去爬山。"),
      (11, "assistant", "Aki", "奶糖真聪明！爬山玩得开心。")],
     {"events": [ev("奶糖学会用猫砂盆", "奶糖第一次自己使用了猫砂盆", "2026-06-20", [10], 5),
                 ev("约小红爬山", "小明计划周日和朋友小红去爬山", "2026-06-21", [10], 5,
                    plan=True, who=("小明", "小红"))]}),
]


def handle(prompt: str, text: str) -> str:
    """The handle (E1, E2 …) the merge prompt gives the event whose line contains `text`."""
    (line,) = [ln for ln in prompt.splitlines() if text in ln]
    return line.split(" ")[0]


def merge_one(request: dict) -> Reply:
    """Merge #1: the checkup result completes the checkup → update one, delete the other."""
    prompt = request["messages"][-1]["content"]
    checkup, result = handle(prompt, "小明带奶糖去做了体检"), handle(prompt, "体检结果一切正常")
    return Reply(content=_json({"instructions": [
        {"action": "update", "id": checkup, "title": "奶糖体检",
         "summary": "小明带奶糖去做了体检，结果一切正常，只是有点瘦", "importance": 6,
         "merge": [result], "reason": "the result completes the checkup"},
        {"action": "delete", "id": result, "reason": "merged into " + checkup},
        {"action": "keep", "id": handle(prompt, "领养了三个月大")},
    ]}))


def merge_two(request: dict) -> Reply:
    """Merge #2: the cancellation corrects the trip plan; an unknown handle is ignored."""
    prompt = request["messages"][-1]["content"]
    plan, cancel = handle(prompt, "计划下周六去上海出差"), handle(prompt, "上海出差取消了")
    return Reply(content=_json({"instructions": [
        {"action": "update", "id": cancel,
         "summary": "小明原定6月27日的上海出差取消了，改为线上会议", "merge": [plan],
         "date": "2030-01-01", "reason": "the cancellation corrects the plan"},
        {"action": "delete", "id": plan, "reason": "cancelled"},
        {"action": "delete", "id": "E99", "reason": "no such event"},
    ]}))


def _json(obj) -> str:
    import json

    return json.dumps(obj, ensure_ascii=False)


def by_summary(services, text: str, statuses=("active", "superseded")):
    (event,) = [e for e in services.store.list_events(SPACE, statuses=statuses, limit=500).events
                if text in e.summary and e.kind == "event"]  # not the session summaries
    return event


class TestSixBatchConversation:
    def test_extraction_and_merges_to_the_expected_chronicle(self, llm_services, double):
        services = llm_services
        assert isinstance(services.extractor, LLMExtractor)
        merges = []
        for day, (items, reply) in enumerate(BATCHES, 1):
            double.reply_json(reply)
            if day == 3:
                double.reply(merge_one)
            if day == 6:
                double.reply(merge_two)
            now = put_batch(services, day, items)
            written = extract_session(services, SPACE, SESSION, now)
            assert len(written) == len(reply["events"])
            merges.append(jobs.run_job("merge", services, now))
        assert double.pending == 0 and double.rejected == []
        kinds = ["merge" if '{"instructions": [' in r["messages"][0]["content"] else "extract"
                 for r in double.requests]
        assert kinds == ["extract"] * 3 + ["merge"] + ["extract"] * 3 + ["merge"]
        assert [m.events for m in merges] == [0, 0, 2, 0, 0, 2]
        assert merges[2].detail["spaces"][SPACE]["merger"] == "llm"

        # the extraction prompt carries resolved times and the chronicle so far
        third = double.requests[2]["messages"][1]["content"]
        assert "time: 昨天 → 2026-06-14" in double.requests[0]["messages"][1]["content"]
        assert "小明计划下周六去上海出差" in third.split("Messages (cite")[0]
        # the merge prompt marks what is new
        first_merge = double.requests[3]["messages"][1]["content"]
        assert first_merge.count("[new]") == 5

        active = services.store.list_events(SPACE, limit=500).events
        assert sorted(e.title for e in active if e.kind == "event") == sorted([
            "领养奶糖", "奶糖体检", "买猫粮", "出差取消", "训练猫砂盆", "报名摄影课",
            "奶糖学会用猫砂盆", "约小红爬山"])
        checkup = by_summary(services, "小明带奶糖去做了体检")
        assert (checkup.summary, checkup.importance, checkup.version) == (
            "小明带奶糖去做了体检，结果一切正常，只是有点瘦", 6, 2)
        assert [(s.seq_start, s.seq_end) for s in checkup.sources] == [(2, 2), (4, 4)]

        # checks on what the model said: the cancellation re-dated to its message day, and
        # a merge cannot move it to 2030
        food = by_summary(services, "高蛋白猫粮")
        assert [(s.seq_start, s.seq_end) for s in food.sources] == [(4, 4)]
        cancel = by_summary(services, "出差取消了")
        assert cancel.when.label == "2026-06-18" and not cancel.plan
        assert cancel.summary == "小明原定6月27日的上海出差取消了，改为线上会议"
        assert sorted(s.seq_start for s in cancel.sources) == [2, 6]
        hike = by_summary(services, "爬山")
        assert (hike.when.label, hike.plan, hike.participants) == (
            "2026-06-21", True, ["小明", "小红"])

        # deletes are supersessions, and history keeps every version
        gone = services.store.list_events(SPACE, statuses=("superseded",)).events
        assert sorted(e.title for e in gone) == ["上海出差计划", "体检结果"]
        for event, statuses in [(checkup, ["active", "active"]),
                                (by_summary(services, "体检结果一切正常"),
                                 ["active", "superseded"]),
                                (by_summary(services, "计划下周六"), ["active", "superseded"]),
                                (cancel, ["active", "active"])]:
            versions = events_uc.history(services, SPACE, event.id)
            assert [v.version for v in versions] == [1, 2]
            assert [v.status for v in versions] == statuses
        v1, v2 = events_uc.history(services, SPACE, checkup.id)
        assert (v1.summary, v2.summary) == ("小明带奶糖去做了体检", checkup.summary)

        # usage accounting matches what the double billed
        stats = space_stats(services, SPACE)
        billed = double.served_usage
        assert stats["llm"]["total"] == {
            "calls": 8, "prompt_tokens": billed["prompt_tokens"],
            "completion_tokens": billed["completion_tokens"], "failures": 0,
            "total_tokens": billed["total_tokens"]}
        assert stats["llm"]["tasks"]["extract"]["calls"] == 6
        assert stats["llm"]["tasks"]["merge"]["calls"] == 2
        assert (stats["llm"]["provider"], stats["llm"]["model"]) == ("openai", "flow-model")
        assert stats["events"] == {"active": 8, "archived": 0, "superseded": 2, "total": 10}
        assert (stats["sessions"], stats["messages"]) == (1, 12)
        assert stats["merge"]["runs"] == 2


class TestRetriesAndFallback:
    def test_invalid_json_once_is_retried_and_succeeds(self, llm_services, double):
        items, reply = BATCHES[0]
        double.reply_text("好的，我来提取事件：领养奶糖")
        double.reply_json(reply)
        now = put_batch(llm_services, 1, items)
        (event,) = extract_session(llm_services, SPACE, SESSION, now)
        assert event.summary == "小明在救助站领养了三个月大的橘猫奶糖"
        assert len(double.requests) == 2
        assert "could not be used" in double.requests[1]["messages"][-1]["content"]
        usage = space_stats(llm_services, SPACE)["llm"]["total"]
        assert (usage["calls"], usage["failures"]) == (2, 0)
        assert usage["prompt_tokens"] == double.served_usage["prompt_tokens"]

    def test_invalid_twice_falls_back_to_offline_and_counts_a_failure(self, llm_services,
                                                                      double):
        items, _ = BATCHES[1]
        double.reply_text("not json").reply_json({"events": [{"title": "no summary"}]})
        now = put_batch(llm_services, 2, items)
        written = extract_session(llm_services, SPACE, SESSION, now)
        messages = llm_services.store.get_messages(SPACE, SESSION)
        offline = llm_services.extractor.fallback.extract(messages, ExtractionContext(SPACE, SESSION))
        assert [e.summary for e in written] == [d.summary for d in offline]
        assert written and all(e.sources for e in written)
        usage = space_stats(llm_services, SPACE)["llm"]["total"]
        assert (usage["calls"], usage["failures"]) == (2, 1)
        assert usage["completion_tokens"] == double.served_usage["completion_tokens"]
        assert llm_services.store.get_session(SPACE, SESSION).extracted_upto == 3

    def test_a_timeout_falls_back_and_the_next_batch_uses_the_llm_again(self, tmp_path,
                                                                       double):
        llm_services = make_services(tmp_path, llm="openai", llm_base_url=double.url,
                                     llm_model="flow-model", llm_timeout_seconds=0.3,
                                     llm_max_retries=0, summary_llm=False)
        items, _ = BATCHES[0]
        double.reply_json({"events": []}, delay=1.0)
        now = put_batch(llm_services, 1, items)
        written = extract_session(llm_services, SPACE, SESSION, now)
        messages = llm_services.store.get_messages(SPACE, SESSION)
        offline = llm_services.extractor.fallback.extract(messages, ExtractionContext(SPACE, SESSION))
        assert [e.summary for e in written] == [d.summary for d in offline] != []
        items, reply = BATCHES[1]
        double.reply_json(reply)
        now = put_batch(llm_services, 2, items)
        assert len(extract_session(llm_services, SPACE, SESSION, now)) == 2
        usage = space_stats(llm_services, SPACE)["llm"]["total"]
        assert (usage["calls"], usage["failures"]) == (1, 1)

    def test_a_failed_llm_merge_falls_back_to_the_offline_merger(self, llm_services, double):
        dup = ev("领养奶糖", "小明在救助站领养了三个月大的橘猫奶糖", "2026-06-14", [0], 8)
        double.reply_json({"events": [dup]})
        now = put_batch(llm_services, 1, BATCHES[0][0])
        extract_session(llm_services, SPACE, SESSION, now)
        double.reply_json({"events": [{**dup, "sources": [2]}]})  # told again the next day
        now = put_batch(llm_services, 2, [(2, "user", "小明", "我前天在救助站领养了一只橘猫，取名奶糖。")])
        assert len(extract_session(llm_services, SPACE, SESSION, now)) == 1
        double.reply_error(500, "boom")
        summary = merge_space(llm_services, SPACE, now, force=True)
        assert (summary["merger"], summary["updated"], summary["superseded"]) == (
            "offline-fallback", 1, 1)
        (kept,) = [e for e in llm_services.store.list_events(SPACE).events if e.kind == "event"]
        assert [s.seq_start for s in kept.sources] == [0, 2]
        usage = space_stats(llm_services, SPACE)["llm"]["tasks"]["merge"]
        assert (usage["calls"], usage["failures"]) == (0, 1)


class TestEntitiesFromTheModel:
    def test_the_models_named_things_become_entities_only_where_verbatim(self, llm_services,
                                                                         double):
        """The model names a book, a shop and something never said: the first two are in the
        evidence and become entities of their kind; the invented one is dropped."""
        from chalicelib.domain.records import Entity

        items = [(0, "user", "小明", "我在西西弗书店买了《小王子》，准备送给奶糖的主人"),
                 (1, "assistant", "Aki", "很棒的礼物！")]
        reply = {"events": [{**ev("买书", "小明在西西弗书店买了《小王子》", "2026-06-15", [0]),
                             "entities": [{"name": "小王子", "kind": "work"},
                                          {"name": "西西弗书店", "kind": "organisation"},
                                          {"name": "亚特兰蒂斯", "kind": "place"},
                                          {"name": "  ", "kind": "thing"}]}]}
        double.reply_json(reply)
        now = put_batch(llm_services, 1, items)
        (event,) = extract_session(llm_services, SPACE, SESSION, now)
        assert "entities" in double.requests[0]["messages"][0]["content"]  # asked for
        named = {(e.name, e.kind) for e in llm_services.store.list_records(Entity, SPACE)}
        assert ("小王子", "work") in named and ("西西弗书店", "organisation") in named
        assert not any(name == "亚特兰蒂斯" for name, _ in named)
        assert all(event.id in e.events for e in llm_services.store.list_records(Entity, SPACE)
                   if e.name in ("小王子", "西西弗书店"))
        assert "mentions" not in event.model_dump()  # not stored on the event
