"""Serializers of the back-office REST API for campaigns and product rules.

``id`` is the spec's id (``campaign_id`` / ``rule_id``); it repeats across markets, so ``pk`` (the row's
database id) is what the detail URLs use.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.models import Market
from campaigns.models import Campaign, ProductRule

# An empty parameter (``?market=``) means no filter, as if it were left out.


class CampaignFilterSerializer(serializers.Serializer):
    market = serializers.CharField(max_length=32, required=False, allow_blank=True)
    type = serializers.CharField(max_length=64, required=False, allow_blank=True)


class ProductRuleFilterSerializer(serializers.Serializer):
    market = serializers.CharField(max_length=32, required=False, allow_blank=True)


@extend_schema_field(OpenApiTypes.OBJECT)
class DefinitionField(serializers.JSONField):
    """The campaign or rule exactly as imported."""


@extend_schema_field(
    {
        "oneOf": [{"type": "string"}, {"type": "object", "additionalProperties": {"type": "string"}}],
        "description": "L10nString: a string, or an object mapping a language code to a string.",
    }
)
class L10nStringField(serializers.JSONField):
    pass


@extend_schema_field(
    {
        "oneOf": [{"type": "number"}, {"type": "object", "additionalProperties": {"type": "number"}}],
        "description": "MarketPrice: a number, or an object mapping a market identifier to a number.",
    }
)
class MarketPriceField(serializers.JSONField):
    pass


class CampaignOutputSerializer(serializers.ModelSerializer):
    pk = serializers.IntegerField(read_only=True, help_text="Database id, used in the detail URL.")
    id = serializers.CharField(source="campaign_id", read_only=True, help_text="The campaign id as imported.")
    market: serializers.SlugRelatedField[Market] = serializers.SlugRelatedField(slug_field="identifier", read_only=True)
    priority = serializers.DecimalField(max_digits=20, decimal_places=6, coerce_to_string=False, read_only=True)
    definition = DefinitionField(read_only=True)

    class Meta:
        model = Campaign
        fields = [
            "pk",
            "id",
            "market",
            "type",
            "name",
            "display_name",
            "priority",
            "members_only",
            "continue_evaluation",
            "definition",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields
        ref_name = "Campaign"


class ProductRuleOutputSerializer(serializers.ModelSerializer):
    pk = serializers.IntegerField(read_only=True, help_text="Database id, used in the detail URL.")
    id = serializers.CharField(source="rule_id", read_only=True, help_text="The product rule id as imported.")
    market: serializers.SlugRelatedField[Market] = serializers.SlugRelatedField(slug_field="identifier", read_only=True)
    display_name = L10nStringField(read_only=True)
    price = MarketPriceField(read_only=True)
    definition = DefinitionField(read_only=True)

    class Meta:
        model = ProductRule
        fields = [
            "pk",
            "id",
            "market",
            "type",
            "name",
            "display_name",
            "tag",
            "product_group",
            "price",
            "definition",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields
        ref_name = "ProductRule"
