"""Serializer fields the apps' answers share and that need no app."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers


def identifier_of(**options: Any) -> serializers.SlugRelatedField[Any]:
    """A related row answered by its ``identifier``, read-only: how every answer names a stock location, an
    integration or a market (``options``: ``allow_null``, ``help_text``...)."""
    return serializers.SlugRelatedField(slug_field="identifier", read_only=True, **options)
