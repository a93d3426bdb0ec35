"""Spec: Order states: which moves the transition rule allows (``orders.models.transition_allowed``)."""

from __future__ import annotations

import pytest

from orders.models import transition_allowed


@pytest.mark.parametrize(
    ("current", "new", "allowed"),
    [
        ("created", "processing", True),
        ("created", "ready", True),
        ("created", "completed", True),
        ("processing", "ready", True),
        ("ready", "completed", True),
        ("ready", "processing", False),
        ("processing", "created", False),
        ("created", "created", False),
        ("created", "rejected", True),
        ("processing", "cancelled", True),
        ("ready", "rejected", True),
        ("completed", "cancelled", False),
        ("rejected", "processing", False),
        ("cancelled", "completed", False),
        ("cancelled", "cancelled", False),
    ],
)
def test_transition_rules(current, new, allowed):
    assert transition_allowed(current, new) is allowed
