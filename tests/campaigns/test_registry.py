"""Each campaign type is registered once: the registry gives the import schema, the pricing family
and the model's choices, so nothing else lists the type codes."""

from __future__ import annotations

from campaigns.models import Campaign, ProductRule
from campaigns.pricing.registry import CAMPAIGN_TYPES, PRODUCT_RULE_TYPES, check_campaign
from core.nodes import Report


def test_the_models_choices_are_the_registry() -> None:
    assert [code for code, _ in Campaign._meta.get_field("type").choices] == list(CAMPAIGN_TYPES)
    assert [code for code, _ in ProductRule._meta.get_field("type").choices] == list(PRODUCT_RULE_TYPES)


def test_every_registered_type_has_a_family_and_a_schema_that_names_its_own_fields() -> None:
    for code, registered in CAMPAIGN_TYPES.items():
        assert callable(registered.family.apply) and callable(registered.family.keys), code
        assert {"id", "type", "name", "display_name", "priority"} <= set(registered.schema.fields), code
        assert set(registered.schema.fields) - {"id", "type", "name", "display_name", "priority"}, code


def test_an_unregistered_type_is_refused_naming_the_type_field() -> None:
    report = Report()
    check_campaign(
        {"id": "x", "type": "bogus", "name": "n", "display_name": "d", "priority": 1}, "campaigns[0]", report
    )
    assert [(e["field"], e["code"]) for e in report.errors] == [("campaigns[0].type", "invalid_choice")]
