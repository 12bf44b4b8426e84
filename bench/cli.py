"""`annals bench` commands."""

from __future__ import annotations

import click


@click.group(help="Benchmarks (LoCoMo retrieval quality, load). Slow; not part of make test.")
def bench() -> None:
    pass
