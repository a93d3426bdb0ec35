"""Output fields the apps' serializers share."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers


def by_identifier(**options: Any) -> serializers.SlugRelatedField:
    """An output field showing a related row (a market, shop, register) by its ``identifier``, read-only."""
    return serializers.SlugRelatedField(slug_field="identifier", read_only=True, **options)
