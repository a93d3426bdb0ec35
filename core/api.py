"""API plumbing the apps' views share, knowing no app (the toolkit's part that needs no account).

A read-only view set of the back-office API is always the same four parts: the model (for the schema, never a
query), the filter and output serializers, and ``select()``, one selector called with the caller's account.
Written out per view set they were one block copied into every app; :func:`reads` is that block once.
:func:`optional_slash_paths` is the POS modules' route tables, :func:`by_identifier` the output field of a
related row shown by its identifier.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.db.models import Model, QuerySet
from django.urls import URLPattern, re_path
from django.views import View
from rest_framework import serializers

ViewSetT = TypeVar("ViewSetT", bound=type)


def reads(
    selector: Callable[..., QuerySet],
    *,
    output: type[serializers.BaseSerializer],
    filters: type[serializers.Serializer] | None = None,
    model: type[Model] | None = None,
) -> Callable[[ViewSetT], ViewSetT]:
    """Class decorator of a read-only view set: its ``select()`` is ``selector(account=..., **filters)``.

    The model comes from the output serializer's ``Meta.model`` (``model`` for a plain serializer), so the view
    set names it once. A filter serializer whose query parameters are not the selector's keywords says how they
    map in a class method ``as_selector_filters(validated) -> keywords``.
    """
    model = model or output.Meta.model  # type: ignore[attr-defined]  # a ModelSerializer's
    as_selector_filters = getattr(filters, "as_selector_filters", None)

    def select(self: Any, **validated: Any) -> QuerySet:
        given = as_selector_filters(validated) if as_selector_filters is not None else validated
        return selector(account=self.account, **given)

    def decorate(cls: ViewSetT) -> ViewSetT:
        cls.queryset = model._default_manager.none()  # type: ignore[attr-defined]
        cls.filter_serializer_class = filters  # type: ignore[attr-defined]
        cls.output_serializer_class = output  # type: ignore[attr-defined]
        cls.select = select  # type: ignore[attr-defined]
        return cls

    return decorate


def optional_slash_paths(*routes: tuple[str, type[View], str]) -> list[URLPattern]:
    """Fixed paths (issue 6) answered with and without the trailing slash: each ``(regex, view, name)``, the regex
    without its ``^`` and ``/?$``. One table a module, rather than one ``re_path`` call a route written out."""
    return [re_path(rf"^{regex}/?$", view.as_view(), name=name) for regex, view, name in routes]


def by_identifier(**options: Any) -> serializers.SlugRelatedField:
    """An output field showing a related row (a market, shop, register) by its ``identifier``, read-only."""
    return serializers.SlugRelatedField(slug_field="identifier", read_only=True, **options)
