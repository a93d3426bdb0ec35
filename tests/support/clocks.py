"""A clock that advances by a step at every reading, standing in for the `time` module a deadline reads."""

from __future__ import annotations


class FakeClock:
    """Stands in for the ``time`` module of ``exports.transforms.common``: every reading of the monotonic clock
    advances it by ``step`` seconds, so a render's deadline passes after a known number of readings, whatever
    the machine's speed (the project asserts on no wall time)."""

    def __init__(self, step: float = 1.0) -> None:
        self.step = step
        self.now = 0.0
        self.readings = 0

    def monotonic(self) -> float:
        self.readings += 1
        self.now += self.step
        return self.now
