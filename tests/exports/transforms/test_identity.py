"""Identity: the wrapper {element_key: entity} as JSON (spec: Events, Exported wrapper)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from exports.transforms.base import ConfigError, Element, RenderContext
from exports.transforms.identity import IdentityTransform

CONTEXT = RenderContext(
    queue={"id": 1, "name": "q"}, account={"identifier": "acme"}, now=datetime.now(UTC), delivery_id="msg_1"
)


def test_the_wrapper_keys_each_entity_by_its_element_key_and_keeps_decimals_exact():
    elements = [Element("a", {"total": Decimal("0.1"), "name": "Smørrebrød"}), Element("b", {"total": 2})]
    rendered = IdentityTransform().render(elements, CONTEXT, {"type": "identity"})
    assert json.loads(rendered.content) == {"a": {"total": 0.1, "name": "Smørrebrød"}, "b": {"total": 2}}
    assert b"0.1" in rendered.content
    assert (rendered.content_type, rendered.extension) == ("application/json", "json")


def test_the_shared_skip_rules_apply():
    transform = IdentityTransform()
    config = {"type": "identity", "skip_voided": True}
    transform.validate(config)
    assert transform.skip_reason(Element("a", {"voided": True}), config) == "voided"
    assert transform.skip_reason(Element("a", {"voided": False}), config) is None


def test_a_bad_skip_rule_is_refused():
    with pytest.raises(ConfigError):
        IdentityTransform().validate({"type": "identity", "skip_if": {"path": "[[", "equals": 1}})
