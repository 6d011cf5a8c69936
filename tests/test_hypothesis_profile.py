"""The test suite's Hypothesis settings (tests/conftest.py): an example may take longer than
Hypothesis's 200 ms on a busy machine, and still fails past `EXAMPLE_DEADLINE`."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLE_DEADLINE


def test_the_suites_profile_is_loaded() -> None:
    loaded = settings.default
    assert loaded is not None
    assert loaded.deadline == EXAMPLE_DEADLINE


@settings(max_examples=1, database=None)
@given(st.none())
def test_an_example_slower_than_200_ms_passes(value: None) -> None:
    time.sleep(0.25)
