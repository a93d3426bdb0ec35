"""Serializers of the back-office REST API for campaigns and product rules.

``id`` is the spec's id (``campaign_id`` / ``rule_id``); it repeats across markets, so ``pk`` (the row's
database id) is what the detail URLs use.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from campaigns import bodies
from campaigns.models import CAMPAIGN_COLUMNS, PRODUCT_RULE_COLUMNS, Campaign, ProductRule
from campaigns.pricing.product_rules import ContainerDepositBody
from core.api import by_identifier
from core.serializers import JSONField, L10nStringField, MarketPriceField, read_only_meta

# An empty parameter (``?market=``) means no filter, as if it were left out.


class CampaignFilterSerializer(serializers.Serializer):
    market = serializers.CharField(max_length=32, required=False, allow_blank=True)
    type = serializers.CharField(max_length=64, required=False, allow_blank=True)


class ProductRuleFilterSerializer(serializers.Serializer):
    market = serializers.CharField(max_length=32, required=False, allow_blank=True)


@extend_schema_field(OpenApiTypes.OBJECT)
class DefinitionField(JSONField):
    """The campaign or rule exactly as imported."""


# What a campaign and a product rule answer alike (a comment: a docstring would be the schema's description).
class _ImportedOutputSerializer(serializers.ModelSerializer):
    pk = serializers.IntegerField(read_only=True, help_text="Database id, used in the detail URL.")
    market = by_identifier(help_text="The identifier of the market it was imported into (one row per market).")
    definition = DefinitionField(read_only=True, help_text="The whole body as imported, with the fields of its `type`.")


def _imported_meta(
    model: type[Campaign] | type[ProductRule], columns: tuple[str, ...], declared: dict[str, Any]
) -> Any:
    """The ``Meta`` of an imported row's output: its columns between the ids and the timestamps, all read-only,
    described as the import body ``declared`` (its fields by name) describes them."""
    return read_only_meta(
        model,
        ["pk", "id", "market", *columns, "definition", "created_at", "updated_at"],
        descriptions={name: declared[name].description for name in columns if name in declared},
        extra_kwargs={"updated_at": {"help_text": "When it was last imported again (ISO 8601)."}},
    )


class CampaignOutputSerializer(_ImportedOutputSerializer):
    id = serializers.CharField(source="campaign_id", read_only=True, help_text="The campaign id as imported.")
    priority = serializers.DecimalField(
        max_digits=20,
        decimal_places=6,
        coerce_to_string=False,
        read_only=True,
        help_text=bodies.Campaign.fields["priority"].description,
    )

    Meta = _imported_meta(Campaign, CAMPAIGN_COLUMNS, bodies.Campaign.fields)


class ProductRuleOutputSerializer(_ImportedOutputSerializer):
    id = serializers.CharField(source="rule_id", read_only=True, help_text="The product rule id as imported.")
    display_name = L10nStringField(read_only=True, help_text=ContainerDepositBody.fields["display_name"].description)
    price = MarketPriceField(read_only=True, help_text=ContainerDepositBody.fields["price"].description)

    Meta = _imported_meta(ProductRule, PRODUCT_RULE_COLUMNS, ContainerDepositBody.fields)


# --- Basket pricing (POST /api/v1/pos/baskets/price): the answer ------------------------------------------
# The body is declared once by ``pos.bodies.Basket`` (validation and request schema); these serializers
# describe the priced basket, with which amounts are per unit and which per line.

PER_UNIT = "Per unit."
PER_LINE = "Per line: all units of the line together."


def _money(help_text: str) -> serializers.DecimalField:
    return serializers.DecimalField(max_digits=15, decimal_places=6, coerce_to_string=False, help_text=help_text)


class _TaxSummarySerializer(serializers.Serializer):
    """Spec: Tax Summary, the tax of one rate."""

    amount = _money(PER_LINE + " Tax at this rate (the basket's: over all lines).")
    rate = serializers.DecimalField(
        max_digits=7,
        decimal_places=6,
        coerce_to_string=False,
        help_text="The rate as a fraction, from 0 to 1 (0.25 for 25%), as the product's or market's tax gives it.",
    )
    tax_name = serializers.CharField(help_text="The tax's name, as the product's or market's tax gives it.")
    type = serializers.CharField(help_text="`vat` (included in prices) or `sales_tax` (added on top).")


class _DiscountSummarySerializer(serializers.Serializer):
    amount = _money(PER_LINE + " What this campaign took off the line (its discounted units together).")
    discount = JSONField(
        help_text=(
            "Spec: Discount Summary: `id` (campaign id), `name` (display name), `application` (`line_item`, or "
            "`line_items` with index ranges when only some units are discounted), `mode`, `type`, `trigger`."
        )
    )


class PricedLineSerializer(serializers.Serializer):
    line_item_id = serializers.CharField(help_text="The line's `line_item_id`, as posted.")
    id = serializers.CharField(required=False, help_text="The product id, as posted.")
    quantity = serializers.IntegerField(help_text="Whole units, as posted.")
    unit_price = _money(PER_UNIT + " Before discounts (the pricing API's own field; a sale has no unit price).")
    retail_price = _money(PER_LINE + " unit_price x quantity, before discounts (as a sale's line retail_price).")
    base_price = _money(PER_LINE + " unit_price x quantity, before discounts.")
    discounts = _DiscountSummarySerializer(many=True, required=False, help_text="What each campaign took off.")
    sub_total = _money(PER_LINE + " After discounts, before sales tax.")
    total = _money(PER_LINE + " After discounts, with sales tax: the sum of the line's discounted unit prices.")
    vat_amount = _money(PER_LINE)
    sales_tax_amount = _money(PER_LINE)
    total_tax_amount = _money(PER_LINE)
    taxes = _TaxSummarySerializer(many=True, required=False, help_text="The line's tax per rate.")


class PricedBasketSerializer(serializers.Serializer):
    base_price = _money("The basket before discounts.")
    total_discounts = _money("All discounts of all lines.")
    sub_total = _money("After discounts, before sales tax.")
    total = _money("What the customer pays: the sum of the line totals.")
    vat_amount = _money("VAT included in the prices.")
    sales_tax_amount = _money("Sales tax added on top.")
    total_tax_amount = _money("vat_amount + sales_tax_amount.")
    is_return = serializers.BooleanField(help_text="Always false: a priced basket is a sale.")
    line_items = PricedLineSerializer(many=True, help_text="The lines, then any container-deposit lines.")
    taxes = _TaxSummarySerializer(many=True, help_text="The basket's tax per rate, over all lines.")
    explanation = JSONField(
        required=False,
        help_text=(
            "Only with `?explain=true`: per campaign considered, `{campaign_id, type, priority, fired, reason, units}`."
        ),
    )
