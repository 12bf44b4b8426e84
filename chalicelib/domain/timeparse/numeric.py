"""Language-neutral numeric forms: 2026-10-20, 2026/10/20 14:30, 2026-10, 14:30."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from chalicelib.domain.timeparse import atoms as A
from chalicelib.domain.timeparse.atoms import Atom
from chalicelib.domain.timeparse.cal import safe_date
from chalicelib.domain.timeparse.rules import RuleSet
from chalicelib.domain.timeparse.span import Ctx

RULES = RuleSet()


@RULES.add(r"(?<![\d/.\-])(?P<y>(?:19|20)\d\d)(?P<s>[-/.])(?P<m>\d{1,2})(?P=s)(?P<d>\d{1,2})"
           r"(?:(?:T|\s+)(?P<H>[01]?\d|2[0-3]):(?P<M>[0-5]\d)(?::(?P<S>[0-5]\d)(?:\.\d+)?)?"
           r"(?P<tz>Z|[+-]\d\d:?\d\d)?)?(?![\d])", needs="#")
def iso_date(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    day = safe_date(int(m["y"]), int(m["m"]), int(m["d"]))
    if day is None:
        return None
    if m["H"] is None:
        return A.days(ctx, day)
    hour, minute = int(m["H"]), int(m["M"])
    if m["tz"] is None:
        return A.clock(ctx, hour, minute, True, day=day)
    # an explicit offset names an instant: show it in the reference zone
    offset = "+00:00" if m["tz"] == "Z" else m["tz"]
    instant = datetime.fromisoformat(f"{day.isoformat()}T{hour:02d}:{minute:02d}{offset}")
    lo = instant.astimezone(ctx.zone)
    return Atom(A.SPAN, lo, lo + timedelta(minutes=1), "minute", day=lo.date())


@RULES.add(r"(?<![\d/.\-])(?P<y>(?:19|20)\d\d)[-/](?P<m>1[0-2]|0?[1-9])(?![\d/.\-])", needs="#")
def year_month(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    return A.month(ctx, int(m["y"]), int(m["m"]))


@RULES.add(r"(?<![\d:.])(?P<H>[01]?\d|2[0-4]):(?P<M>[0-5]\d)(?::[0-5]\d)?(?![\d:])", needs="#")
def hh_mm(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """14:30 is a 24-hour clock; 3:30 is read like 3点半 (1-5 -> afternoon)."""
    hour = int(m["H"])
    fixed = hour >= 13 or m["H"].startswith("0")
    return A.clock(ctx, hour, int(m["M"]), fixed)
