"""The nodes every campaign family's import schema is built from (spec: Discount campaign, rules 1-3).

Each family module in ``campaigns/pricing/`` declares the schema of its own type codes from these, next to its
pricing; ``campaigns.pricing.registry`` registers each type code once, with its family and its schema.
"""

from __future__ import annotations

from typing import Any

from core.nodes import Arr, Bool, Int, MarketPrice, Num, Obj, Report, Rule, Str, exactly_one_of, join

CAMPAIGN_ID_FORBIDDEN = "./#$*[]"
PERCENTAGE = Num(minimum=0, maximum=1)
COUNT = Int(minimum=1)
NEW_PRICE = MarketPrice()
NEW_PRICE_FIELDS = {"new_price_per_item": NEW_PRICE, "new_price_per_item_if_cheaper": NEW_PRICE}
ONE_NEW_PRICE = exactly_one_of("new_price_per_item", "new_price_per_item_if_cheaper")
STR_ID = Str()

CAMPAIGN_COMMON = Obj(
    {
        "id": Str(forbidden=CAMPAIGN_ID_FORBIDDEN),
        "type": Str(),  # checked against the registry by check_campaign, to pick the type's schema
        "name": Str(max_length=1000),
        "display_name": Str(max_length=1000),
        "priority": Num(),
        "members_only": Bool(),
        "continue_evaluation": Bool(),
    },
    required=("id", "type", "name", "display_name", "priority"),
)


def campaign(fields: dict[str, Any], *, required: tuple[str, ...], rules: tuple[Rule, ...] = ()) -> Obj:
    """A campaign type's schema: the common fields plus the type's own."""
    return CAMPAIGN_COMMON.extend(fields, required=required, rules=rules)


def distinct_step_counts(obj: dict[str, Any], path: str, report: Report) -> None:
    seen: set[int] = set()
    for i, step in enumerate(obj.get("steps", [])):
        if step["count"] in seen:
            report.error(join(path, f"steps[{i}].count"), f"count {step['count']} appears in two steps", "duplicate")
        seen.add(step["count"])


def stairs(step_fields: dict[str, Any], **options: Any) -> Arr:
    return Arr(Obj({"count": COUNT, **step_fields}, **options), min_items=1, max_items=100)
