"""Outgoing calls in tests: the fixture ``allow_loopback`` lets them reach servers on 127.0.0.1 (the receivers,
the reference integrator, the file and mail servers), which ``OUTBOUND_ALLOWED_NETWORKS`` refuses otherwise.
Registered for every test by the root conftest."""

from __future__ import annotations

from typing import Any

import pytest

LOOPBACK_NETWORKS = ["127.0.0.1/32"]


@pytest.fixture
def allow_loopback(settings: Any) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = LOOPBACK_NETWORKS
