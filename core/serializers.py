"""The REST framework pieces every app's serializers share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.db.models import Model
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.jsonenc import DecimalJSONEncoder

# What the fields many models share mean, for a model field without a ``help_text`` of its own.
COMMON_DESCRIPTIONS = {
    "created_at": "When the service stored it (ISO 8601).",
    "updated_at": "When it last changed (ISO 8601).",
}


def _model_help_text(model: type[Model], name: str) -> str:
    try:
        return str(getattr(model._meta.get_field(name), "help_text", ""))
    except FieldDoesNotExist:
        return ""


def read_only_meta(
    model: type[Model],
    fields: list[str],
    *,
    ref_name: str = "",
    descriptions: Mapping[str, str] | None = None,
    **options: Any,
) -> Any:
    """The ``Meta`` of an output serializer: these ``fields`` of ``model``, all read-only, under the schema name of
    the model (as its input serializer's: ``Market`` and ``MarketRequest``) or ``ref_name``; ``descriptions`` the
    published description of fields made from the model (a field declared on the serializer says its own
    ``help_text``), ``COMMON_DESCRIPTIONS`` for the shared ones the model does not describe; ``options`` are more
    ``Meta`` options (``extra_kwargs``)."""
    extra: dict[str, dict[str, Any]] = {name: dict(kwargs) for name, kwargs in options.pop("extra_kwargs", {}).items()}
    common = {name: text for name, text in COMMON_DESCRIPTIONS.items() if not _model_help_text(model, name)}
    for name, text in {**common, **(descriptions or {})}.items():
        if name in fields:
            extra.setdefault(name, {}).setdefault("help_text", text)
    shown = {"model": model, "fields": fields, "read_only_fields": fields, "ref_name": ref_name or model.__name__}
    return type("Meta", (), {**shown, "extra_kwargs": extra, **options})


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
