"""The REST framework pieces every app's serializers share."""

from __future__ import annotations

from typing import Any

from django.db.models import Model
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.jsonenc import DecimalJSONEncoder


def read_only_meta(model: type[Model], fields: list[str], *, ref_name: str = "", **options: Any) -> Any:
    """The ``Meta`` of an output serializer: these ``fields`` of ``model``, all read-only, under the schema name of
    the model (as its input serializer's: ``Market`` and ``MarketRequest``) or ``ref_name``; ``options`` are more
    ``Meta`` options (``extra_kwargs``)."""
    shown = {"model": model, "fields": fields, "read_only_fields": fields, "ref_name": ref_name or model.__name__}
    return type("Meta", (), {**shown, **options})


class JSONField(serializers.JSONField):
    """DRF's JSONField for bodies read by the bounded parser, whose numbers with a fraction are Decimal."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("encoder", DecimalJSONEncoder)
        super().__init__(**kwargs)


@extend_schema_field(
    {
        "oneOf": [{"type": "string"}, {"type": "object", "additionalProperties": {"type": "string"}}],
        "description": "L10nString: a string, or an object mapping a language code to a string.",
    }
)
class L10nStringField(JSONField):
    """The spec's L10nString, as stored (campaign and rule names, product names and descriptions)."""


@extend_schema_field(
    {
        "oneOf": [{"type": "number"}, {"type": "object", "additionalProperties": {"type": "number"}}],
        "description": "MarketPrice: a number, or an object mapping a market identifier to a number.",
    }
)
class MarketPriceField(JSONField):
    """The spec's MarketPrice, as stored (deposit rule prices, product retail prices)."""
