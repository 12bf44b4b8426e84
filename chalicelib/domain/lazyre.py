"""Regular expressions compiled on first use.

Compiling is most of what importing a rule module costs (a Unicode class or a long
alternation takes milliseconds; the fact tables ~0.3 s), and most processes use few of the
rules they import: a cold start that answers one recall never reads a fact or checks a
draft. A rule module names its patterns here and calls them (`_WORD().search(text)`); each
is compiled the first time it is called, then kept (functools.cache).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable


def compiled(pattern: str, flags: int = 0) -> Callable[[], re.Pattern[str]]:
    """`re.compile(pattern, flags)`, done at the first call and kept."""
    return functools.cache(lambda: re.compile(pattern, flags))
