"""Lookups that lose a race on purpose, for the tests of what a concurrent retry meets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def missing_once(lookup: Callable[..., Any]) -> Callable[..., Any]:
    """``lookup`` that finds nothing the first time: the check before a pay's insert misses the pay already
    recorded, as a concurrent retry's check does, so the insert meets the unique constraint."""
    calls = iter([True])

    def lookup_missing_once(**keywords: Any) -> Any:
        return None if next(calls, False) else lookup(**keywords)

    return lookup_missing_once
