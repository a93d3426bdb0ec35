"""The REST framework pieces every app's serializers share."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core.jsonenc import DecimalJSONEncoder


class JSONField(serializers.JSONField):
    """DRF's JSONField for bodies read by the bounded parser, whose numbers with a fraction are Decimal."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("encoder", DecimalJSONEncoder)
        super().__init__(**kwargs)
