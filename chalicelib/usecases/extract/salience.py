"""The salience judges that need no model.

`KeepAllJudge`: every statement the small-talk rules keep is worth an event
(ANNALS_SALIENCE=rules) — the rules alone, for comparison, for a deployment that wants every
statement kept, and the default of an `OfflineExtractor()` built without wiring. The e5
judge (the default in every wired deployment) is an adapter: chalicelib/adapters/salience_e5.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chalicelib.ports import Salience


class KeepAllJudge:
    name = "rules"

    def assess(self, texts: Sequence[str]) -> Salience:
        # No vectors to compare turns by: zero vectors, so no two turns are "the same topic".
        return Salience(scores=np.ones(len(texts)), vectors=np.zeros((len(texts), 1), np.float32),
                        threshold=0.0)
