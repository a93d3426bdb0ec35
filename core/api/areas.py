"""An area of the back-office API (the stock, the checkouts, the orders...) and its read-only view sets, each
declared once: its selector, serializers and example on the class, its description the class's docstring, its
list filters one table of the area.

A view set names its output serializer once, for the reads and the schema alike, and its query parameters are
not written out beside the filter serializer that validates them (the two could drift): they are its fields,
described by the area's table (the enum of a choice or boolean field from the field); a filter field without a
description fails at import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db.models import Model, QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers

from core.api.schema import read_operations
from core.api.views import ViewSetT, reads

# The OpenAPI type of a query parameter by the filter field's class (a string otherwise).
_TYPES: dict[type[serializers.Field], OpenApiTypes] = {serializers.UUIDField: OpenApiTypes.UUID}


def _enum(field: serializers.Field) -> list[str] | None:
    if isinstance(field, serializers.ChoiceField):
        return [str(choice) for choice in field.choices]
    if isinstance(field, serializers.BooleanField):
        return ["true", "false"]
    return None


class Area:
    """The read-only view sets of one area of the API: its OpenAPI ``tag`` and ``filters``, the description of
    every list filter of the area by its query parameter (``{noun}`` is the view set's noun)."""

    def __init__(self, tag: str, *, filters: Mapping[str, str] | None = None) -> None:
        self.tag = tag
        self.filters = dict(filters or {})

    def filter_parameters(self, filters: type[serializers.Serializer], *, noun: str) -> list[OpenApiParameter]:
        """The query parameters of a list: the fields of its filter serializer, in the order of the table."""
        fields = filters().get_fields()
        undescribed = sorted(set(fields) - set(self.filters))
        if undescribed:
            raise ImproperlyConfigured(f"{filters.__name__}: no description of {undescribed} in the {self.tag} area")
        return [
            OpenApiParameter(
                name,
                _TYPES.get(type(fields[name]), OpenApiTypes.STR),
                OpenApiParameter.QUERY,
                description=description.format(noun=noun),
                enum=_enum(fields[name]),
            )
            for name, description in self.filters.items()
            if name in fields
        ]

    def schema(
        self,
        *,
        output: type[serializers.BaseSerializer],
        example: dict[str, Any],
        filters: type[serializers.Serializer] | None = None,
        noun: str = "",
    ) -> Callable[[ViewSetT], ViewSetT]:
        """The schema of a read-only view set's list and retrieve: summaries from ``noun`` (by default the output
        model's verbose name), ``example`` the answer of both, the description the view set's docstring
        (drf-spectacular's default); every operation of the view set, its actions too, under the area's tag."""
        noun = noun or str(output.Meta.model._meta.verbose_name)  # type: ignore[attr-defined]
        parameters = self.filter_parameters(filters, noun=noun) if filters is not None else []
        operations = extend_schema_view(
            **read_operations(noun=noun, output_serializer=output, example=example, filters=parameters)
        )
        tagged = extend_schema(tags=[self.tag])  # its actions too

        def decorate(cls: ViewSetT) -> ViewSetT:
            return operations(tagged(cls))  # type: ignore[no-any-return]

        return decorate

    def reads(
        self,
        selector: Callable[..., QuerySet],
        output: type[serializers.BaseSerializer],
        filters: type[serializers.Serializer] | None,
        example: dict[str, Any],
        *,
        model: type[Model] | None = None,
        noun: str = "",
    ) -> Callable[[ViewSetT], ViewSetT]:
        """Class decorator of a read-only view set: ``core.api.reads`` (``selector``, the output and filter
        serializers, the model) and its ``schema`` (``example``), in one line above the class."""
        schema = self.schema(output=output, example=example, filters=filters, noun=noun or _noun(model))
        read = reads(selector, output=output, filters=filters, model=model)

        def decorate(cls: ViewSetT) -> ViewSetT:
            return schema(read(cls))

        return decorate


def _noun(model: type[Model] | None) -> str:
    return str(model._meta.verbose_name) if model is not None else ""
