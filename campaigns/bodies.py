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
COUNT = Field(Int(minimum=1), description="The number of eligible units needed (a positive integer).")
NEW_PRICE = MarketPrice()
STR_ID = Str()


class Campaign(Body, schema_name="DiscountCampaign"):
    """Spec: Discount campaign, the fields every type has; the type's own fields come with its `type`."""

    id = Field(
        Str(forbidden=CAMPAIGN_ID_FORBIDDEN),
        description="Unique in the account; posting the same id overwrites. 1-255 characters, none of `./#$*[]`.",
    )
    # Which registered type: it picks the type's body (``campaigns.pricing.registry``).
    type = Field(Str(), description="The campaign type, which decides the other fields.")
    name = Field(Str(max_length=1000), description="The internal name (1-1000 characters).")
    display_name = Field(
        Str(max_length=1000),
        description="The name shown on the discounted line item in the basket (1-1000 characters).",
    )
    priority = Field(Num(), description="Higher first; ties by `id`.")
    members_only = optional(
        Bool(),
        description="True: applies only when a customer is attached to the sale. Default false.",
    )
    continue_evaluation = optional(Bool(), description="Units it discounts stay open for later campaigns.")


class OnProduct(Body, schema_name="CampaignOnProduct"):
    """The product a campaign looks at (the bases of a type's body give its fields in order)."""

    product_id = Field(STR_ID, description="The product the campaign looks at.")


class OnTag(Body, schema_name="CampaignOnTag"):
    """The tag a campaign looks at."""

    tag = Field(STR_ID, description="The products carrying this tag are the ones the campaign looks at.")


class ProductRule(Body):
    """Spec: Product rule, the fields every type has; the type's own fields come with its `type`."""

    id = Field(Str(), description="Unique in the account; posting the same id overwrites (1-255 characters).")
    type = Field(Str(), description="The product rule type, which decides the other fields.")
    name = Field(Str(max_length=1000), description="The administrative name (1-1000 characters).")
    display_name = Field(L10nString(), description="The name used in the basket and on receipts (L10nString).")


class NewPrices(Body, schema_name="CampaignNewPrices"):
    """Spec rule 2: a new price per unit, always or only where it is cheaper (exactly one of the two)."""

    new_price_per_item = optional(
        NEW_PRICE,
        description=(
            "The new unit price, VAT included, in the currency's major unit: a number, or a market identifier to "
            "a number. Exactly one of this and `new_price_per_item_if_cheaper`."
        ),
    )
    new_price_per_item_if_cheaper = optional(
        NEW_PRICE,
        description=(
            "As `new_price_per_item`, applied only where it is lower than the price already calculated for the unit."
        ),
    )
    one_new_price = rule(exactly_one_of("new_price_per_item", "new_price_per_item_if_cheaper"))


class Step(Body, schema_name="CampaignStep"):
    """A step of a stair: from `count` eligible units on (up to the next step's count)."""

    count = Field(
        COUNT.node,
        description=(
            "The number of eligible units from which this step applies (a positive integer, distinct per step)."
        ),
    )


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
