"""What the LoCoMo and Chinese benches share about where a run lives and what it writes: a
data dir (a fresh temporary one, or one given to reuse what an earlier run built there,
recorded in its `built.json`), and the report and per-question dump files."""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

BUILT = "built.json"


@contextlib.contextmanager
def run_dir(data_dir: Path | str | None, prefix: str) -> Iterator[Path]:
    """`data_dir` (created if missing) or a temporary dir removed afterwards."""
    if data_dir is not None:
        Path(data_dir).mkdir(parents=True, exist_ok=True)
        yield Path(data_dir)
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield Path(tmp)


def read_built(directory: Path) -> dict:
    """What an earlier run built in this dir, by conversation or space id."""
    marker = directory / BUILT
    return json.loads(marker.read_text(encoding="utf-8")) if marker.exists() else {}


def write_built(directory: Path, built: dict) -> None:
    (directory / BUILT).write_text(json.dumps(built), encoding="utf-8")


def write_outputs(report: dict, json_path: Path | str | None, dump_path: Path | str | None,
                  dump_lines: Sequence[str], *, indent: int,
                  default: Callable[[Any], Any]) -> None:
    """The report as JSON and the dump as one line per question, where asked for."""
    if json_path:
        Path(json_path).write_text(json.dumps(report, ensure_ascii=False, indent=indent,
                                              default=default), encoding="utf-8")
    if dump_path:
        Path(dump_path).write_text("".join(line + "\n" for line in dump_lines),
                                   encoding="utf-8")


def footer(report: dict, failed: str, runtime: str) -> list[str]:
    """The lines every bench report ends with: the failed calls, when any, and the runtime
    beside the load average (a busy box slows every figure; the reader must know)."""
    lines = []
    if report["errors"]:
        lines.append(f"ERRORS: {len(report['errors'])} {failed}; first: "
                     f"{report['errors'][0]['error']}")
    la = report["load_average"]
    lines.append(f"{runtime}; load average before/after {la['before'][0]:.2f}/"
                 f"{la['after'][0]:.2f} on {la['cpus']} CPUs")
    return lines
