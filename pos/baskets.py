"""Pricing a basket on request (spec: Discount campaign, Product rule, Product, sale ``summary``).

The POS endpoint ``POST /api/v1/pos/baskets/price`` and the admin's "Price a basket" page share this module:
``pos.bodies.Basket`` validates the request body (errors name the exact field) and is its request schema,
``price_basket_request`` fills in what the service knows about each product (its price, product group and taxes
for the market) and hands the basket to the pricing engine (``campaigns.pricing.price_basket``). Nothing is
written.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from accounts import selectors as account_selectors
from accounts.models import Account, Market
from campaigns.pricing.engine import PricingLine, PricingResult, price_basket
from core.errors import InvalidInput, ServiceError
from core.nodes import Report, join
from integrations import services as integration_services
from integrations.bodies import answers as integration_answers
from integrations.errors import IntegrationFailed, NotConfigured
from ledger.models import Product
from ledger.selectors import catalog as catalog_selectors
from pos.bodies import Basket


def validate_basket(body: Any) -> dict[str, Any]:
    """The cleaned request body (unknown fields dropped). Raises InvalidInput naming every bad field."""
    if not isinstance(body, dict):
        raise ServiceError("The body must be a JSON object", field="body", code="invalid_type")
    cleaned: dict[str, Any] = Basket.validated(body)
    return cleaned


def market_price(price: Any, market: Market) -> Decimal | None:
    """A MarketPrice's amount in ``market``: the number itself, the object's entry, or None when unpriced."""
    if isinstance(price, Mapping):
        price = price.get(market.identifier)
    if price is None or isinstance(price, bool) or not isinstance(price, int | float | Decimal):
        return None
    # Stored JSON gives Decimal for fractions and int for whole numbers; str() keeps a float's shortest form.
    return price if isinstance(price, Decimal) else Decimal(str(price))


def _product_taxes(product: Product, market: Market) -> list[dict[str, Any]] | None:
    taxes = product.taxes
    if isinstance(taxes, Mapping):  # tolerated: taxes per market, like an Expense's
        taxes = taxes.get(market.identifier)
    return list(taxes) if isinstance(taxes, list) and taxes else None


def _pricing_line(
    line: dict[str, Any], product: Product | None, market: Market, path: str, report: Report
) -> PricingLine | None:
    unit_price = line.get("unit_price")
    if unit_price is None:
        if product is not None:
            unit_price = market_price(product.retail_price, market)
        if unit_price is None:
            if product is None and "id" in line:
                message = f"is required: product '{line['id'][:100]}' is not known to the service"
            elif product is None:
                message = "is required for a line without a known product id"
            else:
                message = f"is required: product '{product.product_id[:100]}' has no price in market '{market}'"
            report.error(join(path, "unit_price"), message, "required")
            return None
    behavior = line.get("behavior") or None
    return PricingLine(
        line_item_id=line["line_item_id"],
        product_id=line.get("id"),
        quantity=line["quantity"],
        unit_price=Decimal(unit_price),  # a whole JSON number arrives as int; the engine takes Decimal only
        variant_id=line.get("variant_id"),
        tags=tuple(line.get("tags", ())),
        product_group=line.get("product_group") or (product.product_group if product else None) or None,
        # Body taxes (an explicit [] is a tax-exempt line), else the product's, else None: the engine applies
        # the market's default taxes.
        taxes=line["taxes"] if "taxes" in line else (_product_taxes(product, market) if product else None),
        is_shipping=bool(behavior and "shipping" in behavior),
        name=line.get("name", product.name if product else None),
        behavior=behavior,
    )


# Warnings of a priced basket that the answer always carries (not only with ``?explain=true``): the cashier
# must know that a customer's own prices were left out.
CUSTOMER_DISCOUNT_WARNINGS = frozenset({"customer_discounts_unavailable", "invalid_customer_discount"})


def customer_discounts_for_pricing(
    *, account: Account, market: Market, customer_id: str
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Spec: Customer-specific discount, fetched for the basket's customer (customer id, market, the market's
    base currency): ``(discounts, warnings)``. No integration configured: none, silently (the account does not
    use them). The integrator failing (down, slow, not JSON, not an array, or no time left of the POS request's
    budget): none, and a warning, so the basket is still priced at the till with the account's campaigns. A
    discount of the wrong shape is left out with a warning; the others apply. The customer's last answer serves
    the basket changes of ``POS_CUSTOMER_DISCOUNTS_CACHE_SECONDS`` (``customer_discounts_answer``)."""
    try:
        answer = integration_services.customer_discounts_answer(account=account, customer_id=customer_id, market=market)
    except NotConfigured:
        return [], []
    except IntegrationFailed as exc:
        warning = {
            "field": "customer",
            "message": f"the customer's own discounts could not be fetched, priced without them: {exc.message}",
            "code": "customer_discounts_unavailable",
        }
        return [], [warning]
    discounts, problems = integration_answers.validate("customer_discounts", answer)
    if discounts is None:
        warning = {
            "field": "customer",
            "message": "the customer's own discounts are not an array, priced without them: "
            + integration_answers.describe(problems),
            "code": "customer_discounts_unavailable",
        }
        return [], [warning]
    warnings = [
        {**problem, "field": f"customer_discounts{problem['field']}", "code": "invalid_customer_discount"}
        for problem in problems[:5]
    ]
    return discounts, warnings


def price_basket_request(*, account: Account, basket: dict[str, Any], explain: bool = False) -> PricingResult:
    """Price a validated basket (``validate_basket``) in one of the account's markets.

    Raises ServiceError naming ``market`` for a market the account does not have, and InvalidInput naming
    ``line_items[i].unit_price`` for each line without a price in the body nor a retail price for the market.
    With a ``customer``, the customer's own discounts (runtime integration ``customer_discounts``) are priced
    beside the account's campaigns (``customer_discounts_for_pricing``; its warnings lead the result's).
    """
    market = account_selectors.market_by_identifier(account=account, identifier=basket["market"])
    if market is None:
        raise ServiceError(f"no market '{basket['market'][:32]}' in this account", field="market", code="unknown")
    product_ids = {line["id"] for line in basket["line_items"] if "id" in line}
    products = {p.product_id: p for p in catalog_selectors.products(account=account).filter(product_id__in=product_ids)}
    report = Report()
    lines = [
        _pricing_line(line, products.get(line.get("id", "")), market, f"line_items[{i}]", report)
        for i, line in enumerate(basket["line_items"])
    ]
    if report.errors:
        raise InvalidInput(report.errors)
    customer = basket.get("customer")
    extra: list[dict[str, Any]] = []
    warnings: list[dict[str, str]] = []
    if customer:
        extra, warnings = customer_discounts_for_pricing(
            account=account, market=market, customer_id=customer["identifier"]
        )
    result = price_basket(
        account=account,
        market=market,
        lines=[line for line in lines if line is not None],
        customer=customer,
        explain=explain,
        extra_campaigns=extra,
    )
    result.warnings[:0] = warnings
    return result
