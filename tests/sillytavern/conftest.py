"""The SillyTavern tests need node, npm and Chromium: skipped without them, except where
ANNALS_REQUIRE_BROWSER is set (CI), where a missing one fails."""

from __future__ import annotations

import os

import pytest

from tests.sillytavern.harness import REQUIRE_ENV, sillytavern_missing


@pytest.fixture(scope="module")
def available():
    missing = sillytavern_missing()
    if missing:
        if os.environ.get(REQUIRE_ENV):
            pytest.fail(f"{missing}; {REQUIRE_ENV} is set, so this test may not skip")
        pytest.skip(missing)
