"""The declared bodies every campaign family's import body is built from (spec: Discount campaign, rules 1-3).

Each family module in ``campaigns/pricing/`` declares the body of each of its type codes as a subclass of
``Campaign`` (``core.declare``), next to its pricing; ``campaigns.pricing.registry`` registers each type code
once, with its family and its body, and makes the import's ``oneOf`` of them with a discriminator on ``type``.
"""

from __future__ import annotations

from typing import Any

from core.declare import Body, Field, optional, rule
from core.nodes import Bool, Int, L10nString, MarketPrice, Num, Report, Str, exactly_one_of, join

CAMPAIGN_ID_FORBIDDEN = "./#$*[]"
PERCENTAGE = Field(Num(minimum=0, maximum=1), description="A fraction of the price: 0.15 is 15% off.")
COUNT = Int(minimum=1)
NEW_PRICE = MarketPrice()
STR_ID = Str()


class Campaign(Body, schema_name="DiscountCampaign"):
    """Spec: Discount campaign, the fields every type has; the type's own fields come with its `type`."""

    id = Str(forbidden=CAMPAIGN_ID_FORBIDDEN)
    # Which registered type: it picks the type's body (``campaigns.pricing.registry``).
    type = Field(Str(), description="The campaign type, which decides the other fields.")
    name = Str(max_length=1000)
    display_name = Str(max_length=1000)
    priority = Field(Num(), description="Higher first; ties by `id`.")
    members_only = optional(Bool())
    continue_evaluation = optional(Bool(), description="Units it discounts stay open for later campaigns.")


class OnProduct(Body, schema_name="CampaignOnProduct"):
    """The product a campaign looks at (the bases of a type's body give its fields in order)."""

    product_id = STR_ID


class OnTag(Body, schema_name="CampaignOnTag"):
    """The tag a campaign looks at."""

    tag = STR_ID


class ProductRule(Body):
    """Spec: Product rule, the fields every type has; the type's own fields come with its `type`."""

    id = Str()
    type = Field(Str(), description="The product rule type, which decides the other fields.")
    name = Str(max_length=1000)
    display_name = L10nString()


class NewPrices(Body, schema_name="CampaignNewPrices"):
    """Spec rule 2: a new price per unit, always or only where it is cheaper (exactly one of the two)."""

    new_price_per_item = optional(NEW_PRICE)
    new_price_per_item_if_cheaper = optional(NEW_PRICE)
    one_new_price = rule(exactly_one_of("new_price_per_item", "new_price_per_item_if_cheaper"))


class Step(Body, schema_name="CampaignStep"):
    """A step of a stair: from `count` eligible units on (up to the next step's count)."""

    count = COUNT


class StairCampaign(Campaign):
    """The steps of a stair campaign (each type declares its own step)."""

    @rule
    def distinct_step_counts(stair: dict[str, Any], path: str, report: Report) -> None:
        """No two steps have the same `count`."""
        seen: set[int] = set()
        for i, step in enumerate(stair.get("steps", [])):
            if step["count"] in seen:
                report.error(
                    join(path, f"steps[{i}].count"), f"count {step['count']} appears in two steps", "duplicate"
                )
            seen.add(step["count"])
