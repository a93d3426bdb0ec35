"""The pieces every campaign family shares: the basket's units, a compiled campaign, a campaign's result.

Prices live per unit: each unit of a line carries its own price and its own lock, so
part of a line can be discounted (and later returned) at exactly its price.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from typing import Any, NamedTuple, Protocol

from accounts.money import minor_unit

ZERO = Decimal(0)


Rounding = Callable[[Decimal], Decimal]


@cache
def rounding(currency: str) -> Rounding:
    """``accounts.money.quantize`` (half-up to the currency's minor unit) as one function per currency, the unit
    looked up once: pricing rounds every unit at every step (about 600 times for a 50-line basket), and the
    lookup per call, then the keyword argument, were most of the engine's time (measured: docs/notes/pricing.md)."""
    quantum = Decimal(1).scaleb(-minor_unit(currency))

    def round_half_up(amount: Decimal) -> Decimal:
        return amount.quantize(quantum, ROUND_HALF_UP)

    return round_half_up


def to_decimal(value: Any) -> Decimal:
    """A number from stored JSON (Decimal, int) or a runtime integration's answer (float via its text)."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"not a number: {value!r}")
    return Decimal(str(value))


def market_price(value: Any, market: str) -> Decimal | None:
    """Spec shared type MarketPrice: a number for every market, or {market: number}; None when the market
    has no entry (then the campaign or rule does not apply in that market)."""
    if isinstance(value, Mapping):
        return None if value.get(market) is None else to_decimal(value[market])
    return None if value is None else to_decimal(value)


@dataclass(frozen=True)
class PricingLine:
    line_item_id: str
    product_id: str | None
    quantity: int  # units, > 0 (pricing is per unit)
    unit_price: Decimal  # per unit, as shown on the shelf (VAT included in VAT markets)
    variant_id: str | None = None
    tags: tuple[str, ...] = ()
    product_group: str | None = None
    taxes: list[dict[str, Any]] | None = None  # [{name, rate, type}]; None -> the market's default_taxes
    is_shipping: bool = False  # behavior.shipping
    name: Any = None  # L10nString, copied to the answer
    behavior: dict[str, Any] | None = None  # copied to the answer


class Change(NamedTuple):
    """One unit's price before and after one campaign (a tuple: a basket makes one per discounted unit)."""

    line: LineState
    unit: int  # the unit's index in its line
    before: Decimal
    after: Decimal


@dataclass
class Applied:
    """One campaign's discount on some units of one line (becomes Discount Summaries)."""

    campaign: CompiledCampaign
    type_value: dict[str, Any]
    trigger: dict[str, Any]
    amounts: dict[int, Decimal] = field(default_factory=dict)  # unit index -> discount


@dataclass
class LineState:
    line: PricingLine
    position: int
    prices: list[Decimal]
    locked: list[bool]
    applied: list[Applied] = field(default_factory=list)

    def has_tag(self, tag: str) -> bool:
        return tag in self.line.tags


@dataclass
class CampaignResult:
    """What one campaign did to the basket: whether it fired, why (or why not), and the unit prices it changed
    (the engine's explanation of that campaign)."""

    fired: bool
    reason: str
    changes: list[Change] = field(default_factory=list)


@dataclass
class Basket:
    """The basket being priced: every line's units, the market and its currency.

    Its goods lines are indexed once by product id and by tag, so each campaign reads only the lines it names
    (as the market's campaigns are indexed, so only the campaigns the basket names are read)."""

    lines: list[LineState]
    market: str
    currency: str
    has_customer: bool
    rounded: Rounding = field(init=False, repr=False)  # half-up to the currency's minor unit
    _goods: list[LineState] = field(init=False, repr=False)
    _by_product: dict[str, list[LineState]] = field(init=False, repr=False)
    _by_tag: dict[str, list[LineState]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.rounded = rounding(self.currency)
        self._goods, self._by_product, self._by_tag = [], {}, {}
        for state in self.lines:
            if state.line.is_shipping:
                continue
            self._goods.append(state)
            if state.line.product_id is not None:
                self._by_product.setdefault(state.line.product_id, []).append(state)
            for tag in dict.fromkeys(state.line.tags):  # a tag listed twice is one tag
                self._by_tag.setdefault(tag, []).append(state)

    def goods(self) -> list[LineState]:
        """The lines product campaigns look at: shipping lines are a service, priced only by free shipping."""
        return self._goods

    def lines_of(self, campaign: CompiledCampaign) -> Sequence[LineState]:
        """The goods lines a campaign looks at, in basket order: those with one of its tags when it names tags,
        else those of its products."""
        index, keys = (self._by_tag, campaign.tags) if campaign.tags else (self._by_product, campaign.product_ids)
        if len(keys) == 1:
            (key,) = keys
            return index.get(key, ())
        found = {state.position: state for key in keys for state in index.get(key, ())}
        return [found[position] for position in sorted(found)]

    def matching(self, campaign: CompiledCampaign) -> tuple[list[tuple[LineState, int]], int]:
        """(the unlocked units of the goods lines the campaign looks at, the number of those units locked
        earlier)."""
        units: list[tuple[LineState, int]] = []
        locked = 0
        for state in self.lines_of(campaign):
            for i, is_locked in enumerate(state.locked):
                if is_locked:
                    locked += 1
                else:
                    units.append((state, i))
        return units, locked

    def discount(
        self,
        campaign: CompiledCampaign,
        units: Sequence[tuple[LineState, int]],
        discount_of: Callable[[Decimal], Decimal],
        *,
        type_value: dict[str, Any],
        trigger: dict[str, Any],
    ) -> list[Change]:
        """Lower each unit's price by ``discount_of(price)``, rounded half-up to the minor unit, never below
        zero and never raising it. A unit whose price went down is locked unless the campaign continues
        evaluation; a unit left as it was stays open for later campaigns."""
        changes: list[Change] = []
        by_line: dict[int, Applied] = {}
        amounts: dict[Decimal, Decimal] = {}  # units mostly share a price: one computation per price
        rounded, lock = self.rounded, not campaign.continue_evaluation
        for state, i in units:
            before = state.prices[i]
            amount = amounts.get(before)
            if amount is None:
                amount = amounts[before] = min(rounded(discount_of(before)), before)
            if amount <= 0:
                continue
            after = before - amount
            state.prices[i] = after
            if lock:
                state.locked[i] = True
            applied = by_line.get(state.position)
            if applied is None:
                applied = by_line[state.position] = Applied(campaign, type_value, trigger)
                state.applied.append(applied)
            applied.amounts[i] = amount
            changes.append(Change(state, i, before, after))
        return changes


def not_applied(units: Sequence[tuple[LineState, int]], locked: int) -> str:
    """Why a campaign found no unit to work on."""
    return "locked by a higher priority" if not units and locked else "no matching product"


class Family(Protocol):
    """A campaign family (django-oscar's condition and benefit in one): which products and tags it looks at,
    and what it does to the basket."""

    def keys(self, definition: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
        """(product ids, tags) the campaign needs in the basket; both empty: it looks at every basket."""
        ...

    def apply(self, campaign: CompiledCampaign, basket: Basket) -> CampaignResult: ...


@dataclass(frozen=True)
class CompiledCampaign:
    campaign_id: str
    type: str
    display_name: Any
    priority: Decimal
    members_only: bool
    continue_evaluation: bool
    definition: Mapping[str, Any]
    family: Family
    product_ids: frozenset[str]
    tags: frozenset[str]
    source: str = "campaign"  # or "customer": a customer-specific discount of a runtime integration

    @property
    def order(self) -> tuple[Decimal, str, str]:
        """Evaluation order: priority descending, ties by campaign id (then stored before customer-specific)."""
        return (-self.priority, self.campaign_id, self.source)


def count_trigger(count: int) -> dict[str, Any]:
    return {"items": "items", "count": count}
