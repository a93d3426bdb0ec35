"""The tz database's zone names, read once per process (``zoneinfo.available_timezones`` walks the files each
call): an account's zone, a sale's ``timing.timezone`` and a statement's are checked against them."""

from __future__ import annotations

from functools import cache
from zoneinfo import available_timezones

__all__ = ["is_time_zone"]


@cache
def _names() -> frozenset[str]:
    return frozenset(available_timezones())


def is_time_zone(name: str) -> bool:
    """Whether ``name`` is a zone of the tz database (``Europe/Copenhagen``, ``UTC``)."""
    return name in _names()
