"""Product rules (spec: Product rule; ``container_deposit`` is the only type).

For each line whose product carries the rule's tag, one deposit line: the rule's price for the market per
unit, times the parent's quantity, ``display_name`` as its name, ``product_group`` as its group, taxed like its
parent. Deposit lines are added after the campaigns, so they are never discounted, never counted by a
campaign and never part of the free-shipping total. A rule whose MarketPrice has no entry for the basket's
market adds no deposit there, and the answer carries a warning saying so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from campaigns.bodies import ProductRule
from campaigns.pricing.base import PricingLine, market_price
from core.declare import Field, optional
from core.nodes import MarketPrice, Str


@dataclass(frozen=True)
class CompiledRule:
    rule_id: str
    type: str
    tag: str
    display_name: Any
    product_group: str | None
    price: Any  # MarketPrice as stored


def compile_rule(definition: Mapping[str, Any]) -> CompiledRule:
    return CompiledRule(
        rule_id=definition["id"],
        type=definition.get("type", "container_deposit"),
        tag=definition["tag"],
        display_name=definition.get("display_name"),
        product_group=definition.get("product_group") or None,
        price=definition["price"],
    )


def deposit_line_id(parent_line_item_id: str, rule_id: str) -> str:
    return f"{parent_line_item_id}-deposit-{rule_id}"


class ContainerDeposit:
    def lines_for(
        self, rule: CompiledRule, parent: PricingLine, market: str, warnings: list[dict[str, str]]
    ) -> Sequence[PricingLine]:
        price = market_price(rule.price, market)
        if price is None:
            warnings.append(
                {
                    "field": f"product_rules.{rule.rule_id}.price",
                    "message": f"rule '{rule.rule_id}' has no price for market '{market}': no deposit added",
                    "code": "market_price_missing",
                }
            )
            return ()
        if parent.product_id is None:
            return ()  # the spec's deposit names its product; a line without a product has no deposit
        return (
            PricingLine(
                line_item_id=deposit_line_id(parent.line_item_id, rule.rule_id),
                product_id=None,
                quantity=parent.quantity,
                unit_price=price,
                product_group=rule.product_group,
                taxes=parent.taxes,
                name=rule.display_name,
                behavior={
                    "container_deposit": {
                        "product_id": parent.product_id,
                        "tag": rule.tag,
                        "rule_id": rule.rule_id,
                        "parent_line_item_id": parent.line_item_id,
                    }
                },
            ),
        )


# --- Import body (spec: Product rule) -------------------------------------------------------------------


class ContainerDepositBody(ProductRule, schema_name="ContainerDepositRule"):
    """A deposit line for each line whose product carries `tag`: `price` per unit, for the market."""

    tag = Field(Str(), description="The rule applies to each line whose product carries this tag.")
    product_group = optional(Str(), description="The deposit line's product group.")
    price = Field(
        MarketPrice(),
        description=(
            "The deposit per unit, VAT included, in the currency's major unit: a number, or a market identifier "
            "to a number."
        ),
    )
