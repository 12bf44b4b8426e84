"""The SillyTavern tests need node, npm and Chromium: skipped without them, except where
ANNALS_REQUIRE_BROWSER is set (CI), where a missing one fails."""

from __future__ import annotations

import pytest

from tests.sillytavern.harness import sillytavern_missing
from tests.web.harness import skip_unless


@pytest.fixture(scope="module")
def available():
    skip_unless(sillytavern_missing(), "this test")
