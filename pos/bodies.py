"""The POS basket pricing endpoint's body, declared once (``core.declare``): ``Basket`` validates the request
body of ``POST /api/v1/pos/baskets/price`` and of the admin's "Price a basket" page (errors name the exact field)
and is its request schema (spec: sale ``summary``, Product ``taxes``).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from core.declare import Body, Field, optional, rule
from core.nodes import Arr, Enum, L10nString, Node, Num, Report, Str, join
from ledger.bodies.checkouts import ID, Behavior

MAX_LINE_ITEMS = 1000
# Units per line: far above any real basket, and it bounds the work of the per-unit evaluation.
MAX_QUANTITY = 10_000


class WholeUnits(Node):
    """A positive whole number of units. ``2.0`` is accepted as 2 (some JSON encoders write integers that way);
    ``2.5`` is refused with its own code, since a fractional quantity is a client mistake worth naming."""

    def check(self, value: Any, path: str, report: Report) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | Decimal):
            return self.wrong_type("a positive integer", value, path, report)
        if isinstance(value, Decimal):
            if not value.is_finite():
                return report.error(path, "must be a finite number", "invalid_number")
            if value != value.to_integral_value():
                return report.error(path, f"must be a whole number of units, not {value}", "not_integer")
            value = int(value)
        if value < 1:
            return report.error(path, "must be positive", "out_of_range")
        if value > MAX_QUANTITY:
            return report.error(path, f"must be at most {MAX_QUANTITY}", "out_of_range")
        return value


# A product's or a line's tax definition (spec: Product ``taxes``), not a Tax Summary: no amount.
class BasketTax(Body):
    """A tax of the line (spec: Product `taxes`)."""

    name = Field(ID, description="The tax's name (1-255 characters).")
    rate = Field(Num(minimum=0, maximum=1), description="A fraction: 0.25 for 25%.")
    type = Field(Enum(("vat", "sales_tax")), description="`vat` (included in prices) or `sales_tax` (added on top).")


class BasketCustomer(Body):
    identifier = Field(ID, description="Enables members_only campaigns.")


class BasketLine(Body):
    """A line of the basket; what it leaves out is the product's, when the service knows it."""

    line_item_id = Field(ID, description="Unique within the basket.")
    id = optional(ID, description="Product id.")
    variant_id = optional(ID, description="The variant's id, for a variant product.")
    quantity = Field(WholeUnits(), description="Whole units (2.0 means 2).")
    unit_price = optional(
        Num(minimum=0),
        description="Per unit, before discounts. Optional for a product known to the service: then its "
        "`retail_price` for the market; a product without one (variable price) needs it.",
    )
    name = optional(L10nString(), description="Default: the product's name.")
    tags = optional(Arr(ID, max_items=100), description="The product's tags (at most 100); default: the product's.")
    product_group = optional(ID, description="Default: the product's product_group.")
    taxes = optional(
        Arr(BasketTax, max_items=20), description="Default: the product's taxes, else the market's default taxes."
    )
    behavior = optional(Behavior(), description='`{"shipping": {...}}` marks a shipping line.')


class Basket(Body):
    """A basket to price (nothing is stored)."""

    market = Field(Str(max_length=32), description="Identifier of a market of the account, e.g. `dk`.")
    customer = optional(BasketCustomer, description="The customer, when one is attached to the sale.")
    line_items = Field(
        Arr(BasketLine, min_items=1, max_items=MAX_LINE_ITEMS),
        description="The lines (1 to the basket limit).",
    )

    @rule
    def unique_line_item_ids(obj: dict[str, Any], path: str, report: Report) -> None:
        """Each line's `line_item_id` is unique within the basket."""
        seen: dict[str, int] = {}
        for i, line in enumerate(obj["line_items"]):
            identifier = line["line_item_id"]
            if identifier in seen:
                report.error(
                    join(path, f"line_items[{i}].line_item_id"),
                    f"'{identifier[:100]}' is already used by line_items[{seen[identifier]}]",
                    "duplicate",
                )
            else:
                seen[identifier] = i
