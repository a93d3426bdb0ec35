"""The applicator loop: a basket priced against a market's campaigns and product rules (spec: Discount
campaign, Customer-specific discount, Product rule, Discount Summary, Tax Summary, Sale ``summary``).

A market's campaigns are compiled once into an index by product id and tag (a campaign for products and tags
not in the basket is never looked at) and cached per process; ``PricingVersion`` (one row per market, changed
in the transaction of every campaign or rule write) tells each process whether its copy is current, with one
cheap query per call.

Per unit and per line: ``unit_price`` is the price of one unit before discounts; ``retail_price`` (as in a
sale, docs/amounts.md), ``base_price``, ``sub_total``, ``total`` and the tax amounts are per line (all units);
the basket's are the sums of its lines.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypedDict, Unpack

from django.db import connections, router

from accounts.models import Account, Market
from campaigns.models import Campaign, PricingVersion, ProductRule
from campaigns.pricing.base import (
    ZERO,
    Applied,
    Basket,
    CampaignResult,
    CompiledCampaign,
    LineState,
    PricingLine,
    Rounding,
    rounding,
    to_decimal,
)
from campaigns.pricing.product_rules import CompiledRule, compile_rule
from campaigns.pricing.registry import CAMPAIGN_TYPES, PRODUCT_RULE_TYPES, check_campaign
from core.decimals import floats_as_decimals
from core.errors import NotFound, ServiceError
from core.nodes import INVALID, Report

PROMOTION_DOMAIN = "KX_PROMOTION_DOMAIN"
MAX_UNITS_PER_LINE = 10_000  # prices live per unit; no retail line holds more
MAX_CACHED_MARKETS = 256


@dataclass
class PricingResult:
    summary: dict[str, Any]  # the spec's sale ``summary`` shape (is_return False, line_items, ...)
    explanation: list[dict[str, Any]] | None  # only when explain=True
    # Problems of the market's definitions that did not stop pricing (a rule without a price for the market).
    warnings: list[dict[str, str]] = field(default_factory=list)


# --- Compiling a market's campaigns and rules -------------------------------------------------------------


@dataclass(frozen=True)
class CompiledMarket:
    by_product: dict[str, tuple[CompiledCampaign, ...]]
    by_tag: dict[str, tuple[CompiledCampaign, ...]]
    everywhere: tuple[CompiledCampaign, ...]  # campaigns that look at every basket (free shipping)
    rules_by_tag: dict[str, tuple[CompiledRule, ...]]
    campaign_count: int


def compile_campaign(definition: Mapping[str, Any], *, source: str = "campaign") -> CompiledCampaign | None:
    """A campaign definition (as imported, or a customer-specific discount) ready to evaluate; None for a
    type the engine does not know (only possible for customer-specific discounts: imports check the type)."""
    registered = CAMPAIGN_TYPES.get(definition.get("type"))  # type: ignore[arg-type]
    if registered is None:
        return None
    family = registered.family
    product_ids, tags = family.keys(definition)
    return CompiledCampaign(
        campaign_id=str(definition["id"]),
        type=definition["type"],
        display_name=definition.get("display_name") or definition.get("name") or definition["id"],
        priority=to_decimal(definition.get("priority", 0)),
        members_only=bool(definition.get("members_only", False)),
        continue_evaluation=bool(definition.get("continue_evaluation", False)),
        definition=definition,
        family=family,
        product_ids=product_ids,
        tags=tags,
        source=source,
    )


def compile_market(campaigns: Iterable[Mapping[str, Any]], rules: Iterable[Mapping[str, Any]]) -> CompiledMarket:
    """Index campaign and rule definitions by product id and tag. Pure: the order given does not matter."""
    by_product: dict[str, list[CompiledCampaign]] = {}
    by_tag: dict[str, list[CompiledCampaign]] = {}
    everywhere: list[CompiledCampaign] = []
    count = 0
    for definition in campaigns:
        campaign = compile_campaign(definition)
        if campaign is None:
            continue
        count += 1
        for product_id in campaign.product_ids:
            by_product.setdefault(product_id, []).append(campaign)
        for tag in campaign.tags:
            by_tag.setdefault(tag, []).append(campaign)
        if not campaign.product_ids and not campaign.tags:
            everywhere.append(campaign)
    rules_by_tag: dict[str, list[CompiledRule]] = {}
    for definition in rules:
        if definition.get("type", "container_deposit") in PRODUCT_RULE_TYPES:
            rule = compile_rule(definition)
            rules_by_tag.setdefault(rule.tag, []).append(rule)
    return CompiledMarket(
        by_product={k: tuple(v) for k, v in by_product.items()},
        by_tag={k: tuple(v) for k, v in by_tag.items()},
        everywhere=tuple(everywhere),
        rules_by_tag={k: tuple(sorted(v, key=lambda r: r.rule_id)) for k, v in rules_by_tag.items()},
        campaign_count=count,
    )


_cache: OrderedDict[int, tuple[str, CompiledMarket]] = OrderedDict()
_cache_lock = threading.Lock()


def clear_cache() -> None:
    with _cache_lock:
        _cache.clear()


# PricingVersion's table and columns (plain names, the same in every backend).
VERSION_SQL = "SELECT version FROM campaigns_pricingversion WHERE market_id = %s"


def pricing_version(*, market: Market) -> str | None:
    """The market's pricing version as a token (None: never written through campaigns.services). Plain SQL: it
    is read on every call, and building this one-row query through the ORM took three times its round trip
    (measured on PostgreSQL: docs/notes/pricing.md)."""
    alias = router.db_for_read(PricingVersion)
    with connections[alias].cursor() as cursor:
        cursor.execute(VERSION_SQL, [market.pk])
        row = cursor.fetchone()
    return None if row is None else str(row[0])


def compiled_for(*, account: Account, market: Market) -> CompiledMarket:
    """The market's compiled campaigns and rules, from this process's cache while its version is current."""
    token = pricing_version(market=market)
    if token is not None:
        with _cache_lock:
            hit = _cache.get(market.pk)
            if hit is not None and hit[0] == token:
                _cache.move_to_end(market.pk)
                return hit[1]
    # Read after the version: the rows are at least as new as the token they are cached under, so a write in
    # between costs one more compile, never a stale answer.
    compiled = compile_market(
        Campaign.objects.filter(account=account, market=market).values_list("definition", flat=True),
        ProductRule.objects.filter(account=account, market=market).values_list("definition", flat=True),
    )
    # A market without a version row was never written through campaigns.services: nothing to cache safely.
    if token is not None:
        with _cache_lock:
            _cache[market.pk] = (token, compiled)
            _cache.move_to_end(market.pk)
            while len(_cache) > MAX_CACHED_MARKETS:
                _cache.popitem(last=False)
    return compiled


# --- Pricing ----------------------------------------------------------------------------------------------


class PricingOptions(TypedDict, total=False):
    """What a basket is priced with beyond its lines; ``evaluate``'s keyword arguments of the same names.

    extra_campaigns: campaign definitions (same JSON shape as imported campaigns, prices plain numbers) to
    evaluate beside the stored ones: the customer-specific discounts of the runtime-integrations issue."""

    customer: Mapping[str, Any] | None
    explain: bool
    extra_campaigns: Sequence[Mapping[str, Any]]


def price_basket(
    *, account: Account, market: Market, lines: Sequence[PricingLine], **options: Unpack[PricingOptions]
) -> PricingResult:
    """Price a basket in a market, with the stored campaigns compiled once per market."""
    if market.account_id != account.pk:
        raise NotFound("no such market in this account", field="market")
    return evaluate(compiled=compiled_for(account=account, market=market), market=market, lines=lines, **options)


def evaluate(
    *,
    compiled: CompiledMarket,
    market: Market,
    lines: Sequence[PricingLine],
    customer: Mapping[str, Any] | None = None,
    explain: bool = False,
    extra_campaigns: Sequence[Mapping[str, Any]] = (),
) -> PricingResult:
    """The applicator loop over an already compiled market; no database access."""
    currency = market.currency
    states = _states(lines, currency)
    basket = Basket(lines=states, market=market.identifier, currency=currency, has_customer=bool(customer))
    explanation: list[dict[str, Any]] = []
    warnings: list[dict[str, str]] = []
    extras = _customer_campaigns(extra_campaigns, warnings)
    for campaign in _candidates(compiled, states, extras):
        if campaign.members_only and not basket.has_customer:
            result = CampaignResult(False, "no customer")
        else:
            result = campaign.family.apply(campaign, basket)
        if explain:
            explanation.append(_explain(campaign, result))
    deposits = _deposits(compiled, states, market.identifier, warnings)
    summary = _summary(states, deposits, currency, market.default_taxes)
    return PricingResult(summary=summary, explanation=explanation if explain else None, warnings=warnings)


def _states(lines: Sequence[PricingLine], currency: str) -> list[LineState]:
    rounded = rounding(currency)
    seen: set[str] = set()
    states = []
    for position, line in enumerate(lines):
        at = f"line_items[{position}]"
        if line.line_item_id in seen:
            raise ServiceError(f"line_item_id '{line.line_item_id[:100]}' appears twice", field=f"{at}.line_item_id")
        seen.add(line.line_item_id)
        if isinstance(line.quantity, bool) or not isinstance(line.quantity, int) or line.quantity <= 0:
            raise ServiceError("must be a positive whole number of units", field=f"{at}.quantity")
        if line.quantity > MAX_UNITS_PER_LINE:
            raise ServiceError(f"must be at most {MAX_UNITS_PER_LINE}", field=f"{at}.quantity", code="out_of_range")
        if not isinstance(line.unit_price, Decimal) or not line.unit_price.is_finite() or line.unit_price < 0:
            raise ServiceError("must be a number, at least 0", field=f"{at}.unit_price")
        # Prices are per unit at the currency's minor unit from the start: every later step rounds to it too.
        price = rounded(line.unit_price)
        states.append(LineState(line, position, [price] * line.quantity, [False] * line.quantity))
    return states


def _customer_campaigns(
    definitions: Sequence[Mapping[str, Any]], warnings: list[dict[str, str]]
) -> list[CompiledCampaign]:
    """Customer-specific discounts come from an integrator's endpoint, not through the import's validation:
    each is checked against the import's campaign schema, and one that fails is left out with a warning
    (the sale goes on at the other prices rather than failing at the till)."""
    out = []
    for i, definition in enumerate(definitions):
        report = Report()
        cleaned = check_campaign(floats_as_decimals(definition), f"customer_discounts[{i}]", report)
        if cleaned is INVALID:
            warnings.extend({**error, "code": "invalid_customer_discount"} for error in report.errors[:5])
            continue
        compiled = compile_campaign(cleaned, source="customer")
        if compiled is not None:
            out.append(compiled)
    return out


def _candidates(
    compiled: CompiledMarket, states: list[LineState], extras: Sequence[CompiledCampaign]
) -> list[CompiledCampaign]:
    """The campaigns that can touch this basket, in evaluation order: found through the index by the
    basket's product ids and tags, the ones that look at every basket, and the customer-specific ones."""
    found: dict[tuple[str, str], CompiledCampaign] = {}
    for state in states:
        if state.line.is_shipping:
            continue
        if state.line.product_id is not None:
            for campaign in compiled.by_product.get(state.line.product_id, ()):
                found[(campaign.source, campaign.campaign_id)] = campaign
        for tag in state.line.tags:
            for campaign in compiled.by_tag.get(tag, ()):
                found[(campaign.source, campaign.campaign_id)] = campaign
    for campaign in compiled.everywhere:
        found[(campaign.source, campaign.campaign_id)] = campaign
    for extra in extras:
        found[(extra.source, extra.campaign_id)] = extra
    return sorted(found.values(), key=lambda c: c.order)


def _explain(campaign: CompiledCampaign, result: CampaignResult) -> dict[str, Any]:
    return {
        "campaign_id": campaign.campaign_id,
        "type": campaign.type,
        "display_name": campaign.display_name,
        "priority": campaign.priority,
        "source": campaign.source,
        "members_only": campaign.members_only,
        "continue_evaluation": campaign.continue_evaluation,
        "fired": result.fired,
        "reason": result.reason,
        "units": [
            {
                "line_item_id": change.line.line.line_item_id,
                "index": change.unit,
                "before": change.before,
                "after": change.after,
            }
            for change in result.changes
        ],
    }


def _deposits(
    compiled: CompiledMarket, states: list[LineState], market: str, warnings: list[dict[str, str]]
) -> dict[int, list[PricingLine]]:
    """Deposit lines by the position of their parent line."""
    out: dict[int, list[PricingLine]] = {}
    warned: set[str] = set()
    for state in states:
        if state.line.is_shipping:
            continue
        rules = {rule.rule_id: rule for tag in state.line.tags for rule in compiled.rules_by_tag.get(tag, ())}
        if not rules:
            continue
        for rule in sorted(rules.values(), key=lambda r: r.rule_id):
            sink: list[dict[str, str]] = []
            added = PRODUCT_RULE_TYPES[rule.type].family.lines_for(rule, state.line, market, sink)
            if sink and rule.rule_id not in warned:
                warned.add(rule.rule_id)
                warnings.extend(sink)
            out.setdefault(state.position, []).extend(added)
    return out


# --- The answer: the spec's sale summary ------------------------------------------------------------------


def _summary(
    states: list[LineState], deposits: dict[int, list[PricingLine]], currency: str, default_taxes: Any
) -> dict[str, Any]:
    rounded = rounding(currency)
    taxes_of = _TaxPlans(default_taxes)
    line_items: list[dict[str, Any]] = []
    ids = {state.line.line_item_id for state in states}
    for state in states:
        line_items.append(_line_item(state.line, state.prices, state.applied, rounded, taxes_of))
        for deposit in deposits.get(state.position, ()):
            if deposit.line_item_id in ids:
                raise ServiceError(
                    f"line_item_id '{deposit.line_item_id[:100]}' is the id of a deposit line the service adds",
                    field=f"line_items[{state.position}].line_item_id",
                    code="duplicate",
                )
            ids.add(deposit.line_item_id)
            price = rounded(deposit.unit_price)
            line_items.append(_line_item(deposit, [price] * deposit.quantity, [], rounded, taxes_of))
    summary: dict[str, Any] = {}
    for name in ("base_price", "sub_total", "total", "vat_amount", "sales_tax_amount", "total_tax_amount"):
        summary[name] = rounded(sum([line[name] for line in line_items], ZERO))
    summary["total_discounts"] = summary["base_price"] - summary["sub_total"]
    taxes: dict[tuple[str, Decimal, str], Decimal] = {}
    for line in line_items:
        for tax in line["taxes"]:
            key = (tax["tax_name"], tax["rate"], tax["type"])
            taxes[key] = taxes.get(key, ZERO) + tax["amount"]
    summary["taxes"] = [
        {"amount": amount, "rate": rate, "tax_name": name, "type": kind}
        for (name, rate, kind), amount in sorted(taxes.items(), key=lambda item: (item[0][2], item[0][0], item[0][1]))
    ]
    summary["is_return"] = False
    summary["line_items"] = line_items
    return summary


def _line_item(
    line: PricingLine, prices: list[Decimal], applied: list[Applied], rounded: Rounding, taxes_of: _TaxPlans
) -> dict[str, Any]:
    unit_price = rounded(line.unit_price)
    before_discounts = rounded(unit_price * line.quantity)
    sub_total = sum(prices, ZERO)
    taxes, vat, sales_tax = taxes_of(line.taxes).summaries(sub_total, rounded)
    item: dict[str, Any] = {"line_item_id": line.line_item_id}
    if line.product_id is not None:
        item["id"] = line.product_id
    if line.variant_id is not None:
        item["variant_id"] = line.variant_id
    item["quantity"] = line.quantity
    item["unit_price"] = unit_price
    item["retail_price"] = item["base_price"] = before_discounts
    item["discounts"] = [summary for one in applied for summary in _discount_summaries(line, one)] if applied else []
    item["sub_total"] = rounded(sub_total)
    item["total"] = rounded(sub_total + sales_tax)
    item["vat_amount"] = rounded(vat)
    item["sales_tax_amount"] = rounded(sales_tax)
    item["total_tax_amount"] = rounded(vat + sales_tax)
    item["taxes"] = taxes
    item["tags"] = list(line.tags)
    if line.product_group is not None:
        item["product_group"] = line.product_group
    if line.name is not None:
        item["name"] = line.name
    if line.behavior is not None:
        item["behavior"] = line.behavior
    return item


@dataclass(frozen=True)
class _TaxPlan:
    """A line's tax definitions, read once per basket: its lines mostly share the market's or their product's."""

    taxes: tuple[tuple[str, Decimal, str], ...]  # (tax_name, rate, type)
    vat_divisor: Decimal  # 1 + the sum of the VAT rates

    @classmethod
    def of(cls, taxes: Iterable[Mapping[str, Any]]) -> _TaxPlan:
        taxes = [dict(tax) for tax in taxes]
        vat_rates = sum((to_decimal(tax["rate"]) for tax in taxes if tax.get("type", "vat") == "vat"), ZERO)
        read = []
        for tax in taxes:
            kind = tax.get("type", "vat")
            read.append((tax.get("tax_name", tax.get("name", kind.upper())), to_decimal(tax["rate"]), kind))
        return cls(tuple(read), 1 + vat_rates)

    def summaries(self, sub_total: Decimal, rounded: Rounding) -> tuple[list[dict[str, Any]], Decimal, Decimal]:
        """Tax Summaries of one line. VAT is included in the price: the VAT of a rate is the line's share of it,
        ``sub_total * rate / (1 + the sum of the VAT rates)``; sales tax is added on top: ``sub_total * rate``.
        Each rounded half-up to the minor unit, per line."""
        out = []
        vat = sales_tax = ZERO
        for name, rate, kind in self.taxes:
            if kind == "sales_tax":
                amount = rounded(sub_total * rate)
                sales_tax += amount
            else:
                amount = rounded(sub_total * rate / self.vat_divisor)
                vat += amount
            out.append({"amount": amount, "rate": rate, "tax_name": name, "type": kind})
        return out, vat, sales_tax


class _TaxPlans:
    """The tax plan of each line of one basket: its own taxes, else the market's default taxes."""

    def __init__(self, default_taxes: Any) -> None:
        self.default_taxes = default_taxes
        # By the identity of the taxes list, kept alive here so that no other list can take its id.
        self.plans: dict[int, tuple[Any, _TaxPlan]] = {}

    def __call__(self, line_taxes: list[dict[str, Any]] | None) -> _TaxPlan:
        taxes = line_taxes if line_taxes is not None else self.default_taxes or []
        hit = self.plans.get(id(taxes))
        if hit is None:
            hit = self.plans[id(taxes)] = (taxes, _TaxPlan.of(taxes))
        return hit[1]


def _discount_summaries(line: PricingLine, applied: Applied) -> list[dict[str, Any]]:
    """Spec: Discount Summary; one per run of consecutive units (``application.line_items`` holds one range
    per line), or one for the whole line."""
    campaign, amounts = applied.campaign, applied.amounts
    runs: list[list[int]] = []
    if len(amounts) == line.quantity:
        runs.append(list(range(line.quantity)))  # every unit: one run (most discounts)
    else:
        for i in sorted(amounts):
            if runs and runs[-1][-1] == i - 1:
                runs[-1].append(i)
            else:
                runs.append([i])
    out = []
    for run in runs:
        if len(run) == line.quantity:
            application: dict[str, Any] = {"line_item": line.line_item_id}
        elif len(run) == 1:
            application = {"line_items": {line.line_item_id: {"index": run[0]}}}
        else:
            application = {"line_items": {line.line_item_id: {"start_index": run[0], "end_index": run[-1]}}}
        out.append(
            {
                "amount": sum([amounts[i] for i in run], ZERO),  # each already at the minor unit
                "discount": {
                    "id": campaign.campaign_id,
                    "name": campaign.display_name,
                    "application": application,
                    "mode": {"automatic": {"domain": PROMOTION_DOMAIN, "identifier": campaign.campaign_id}},
                    "type": applied.type_value,
                    "trigger": applied.trigger,
                },
            }
        )
    return out
