"""Campaigns in tests: definitions as the import stores them (and stored rows), and pricing a basket with the
engine alone: lines, a shipping line, an unsaved market, the result's sub-totals, reasons and summary errors."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from accounts.models import Market
from campaigns.models import Campaign
from campaigns.pricing.engine import PricingLine, PricingResult, compile_market, evaluate
from ledger.bodies.checkouts import SALE_SUMMARY, SaleReport
from tests.factories import CampaignFactory
from tests.support.tenants import Tenant

TSHIRTS_15 = {
    "id": "tshirts-15",
    "type": "percentage_discount-count_or_more-single_product",
    "name": "T-shirts 15%",
    "display_name": "15% on 3",
    "priority": 10,
    "product_id": "tshirt",
    "percentage": 0.15,
    "count": 3,
}
JEANS_10 = {**TSHIRTS_15, "id": "jeans-10", "name": "Jeans", "display_name": "10% jeans", "product_id": "jeans"}


def stored_campaign(tenant: Tenant, definition: dict[str, Any]) -> Campaign:
    """A campaign row as the import stores it: the columns mirror the definition."""
    return CampaignFactory(
        account=tenant.account,
        market=tenant.market,
        campaign_id=definition["id"],
        type=definition["type"],
        name=definition["name"],
        display_name=definition["display_name"],
        priority=definition["priority"],
        members_only=definition.get("members_only", False),
        definition=definition,
    )


VAT_25 = [{"name": "VAT", "rate": 0.25, "type": "vat"}]


def campaign(campaign_id: str, type: str, priority: int | str = 1, **fields: Any) -> dict[str, Any]:
    """A campaign definition as the import stores it (numbers as Decimal)."""
    return {
        "id": campaign_id,
        "type": type,
        "name": campaign_id,
        "display_name": f"{campaign_id} shown",
        "priority": Decimal(priority),
        **fields,
    }


def deposit_rule(rule_id: str, tag: str, price: Any, **fields: Any) -> dict[str, Any]:
    return {
        "id": rule_id,
        "type": "container_deposit",
        "name": rule_id,
        "display_name": {"da": "Pant", "en": "Deposit"},
        "tag": tag,
        "price": price,
        **fields,
    }


def line(line_item_id: str, product_id: str | None, quantity: int, unit_price: str, **fields: Any) -> PricingLine:
    return PricingLine(line_item_id, product_id, quantity, Decimal(unit_price), **fields)


def shipping(line_item_id: str, price: str) -> PricingLine:
    return PricingLine(line_item_id, "shipping", 1, Decimal(price), is_shipping=True, behavior={"shipping": {}})


def market(identifier: str = "dk", currency: str = "DKK", taxes: list[dict[str, Any]] | None = None) -> Market:
    """An unsaved market: the engine's evaluate() needs no database."""
    return Market(identifier=identifier, currency=currency, default_taxes=VAT_25 if taxes is None else taxes)


def price(
    campaigns: list[dict[str, Any]],
    lines: list[PricingLine],
    *,
    rules: list[dict[str, Any]] | None = None,
    at: Market | None = None,
    customer: dict[str, Any] | None = None,
    extra: list[dict[str, Any]] | None = None,
) -> PricingResult:
    return evaluate(
        compiled=compile_market(campaigns, rules or []),
        market=at or market(),
        lines=lines,
        customer=customer,
        explain=True,
        extra_campaigns=extra or [],
    )


def sub_totals(result: PricingResult) -> dict[str, Decimal]:
    return {item["line_item_id"]: item["sub_total"] for item in result.summary["line_items"]}


def sale_summary_errors(result: PricingResult, currency: str = "DKK") -> list[dict[str, str]]:
    report = SaleReport(currency=currency)
    SALE_SUMMARY.check(result.summary, "summary", report)
    return report.errors


def reasons(result: PricingResult) -> dict[str, str]:
    assert result.explanation is not None
    return {entry["campaign_id"]: entry["reason"] for entry in result.explanation}
