"""The view-set bases of the back-office API and the class decorator that fills in their reads, knowing no app.

A read-only view set of the back-office API is always the same four parts: the model (for the schema, never a
query), the filter and output serializers, and ``select()``, one selector called with the caller's account.
Written out per view set they were one block copied into every app; :func:`reads` is that block once.
Who the caller is (``self.account``) is the authenticating app's to say: ``accounts.scoping`` adds it to these
bases. :func:`optional_slash_paths` is the POS modules' route tables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from django.db.models import Model, QuerySet
from django.http import Http404
from django.urls import URLPattern, re_path
from django.views import View
from rest_framework import serializers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

ViewSetT = TypeVar("ViewSetT", bound=type)

_MAX_ID = 2**63 - 1


def _is_id(value: str) -> bool:
    # The length first: int() of a 5,000-digit string is refused by Python itself (and slow below that).
    return len(value) <= 19 and value.isascii() and value.isdigit() and int(value) <= _MAX_ID


class ApiViewSet(viewsets.GenericViewSet):
    """A view set whose every query goes through a selector with the caller's account (``self.account``, given
    by the authenticating app's subclass).

    Subclasses set ``queryset = Model.objects.none()`` (the model, for the schema; never a query) and
    implement ``get_queryset()`` with a selector, so ``get_object()`` of another account's row is a 404.
    """

    def paginated(self, queryset: QuerySet, serializer_class: type[serializers.BaseSerializer]) -> Response:
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(serializer_class(page, many=True).data)

    def get_object(self) -> Any:
        if self.lookup_field == "pk" and not _is_id(self.kwargs.get("pk", "")):
            # "abc" or an id beyond the column's range would be a database error, i.e. a 500.
            raise Http404
        return super().get_object()

    @staticmethod
    def validated(serializer_class: type[serializers.Serializer], data: Any, *, partial: bool = False) -> Any:
        serializer = serializer_class(data=data, partial=partial)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data


class ReadsViewSet(ApiViewSet):
    """A filtered, paginated list and a retrieve by id, both through ``select()`` (a selector call, set by
    :func:`reads`); a view set that also writes (API keys, runtime integrations) adds its writes to these."""

    filter_serializer_class: ClassVar[type[serializers.Serializer] | None] = None
    output_serializer_class: ClassVar[type[serializers.BaseSerializer]]

    def select(self, **filters: Any) -> QuerySet:
        raise NotImplementedError

    def get_queryset(self) -> QuerySet:
        return self.select()

    def get_serializer_class(self) -> type[serializers.BaseSerializer]:
        return self.output_serializer_class

    def list(self, request: Request) -> Response:
        filters = {}
        if self.filter_serializer_class is not None:
            filters = self.validated(self.filter_serializer_class, request.query_params)
        return self.paginated(self.select(**filters), self.output_serializer_class)

    def retrieve(self, request: Request, **lookup: Any) -> Response:
        return Response(self.output_serializer_class(self.get_object()).data)


class ReadOnlyViewSet(ReadsViewSet):
    """Only the reads: a list and a retrieve."""


class WritesViewSet(ApiViewSet):
    """The writes of a view set that also changes and deletes, around the two it implements: ``update``
    (PUT; PATCH is it with ``partial=True``) and ``perform_destroy`` (the row DELETE found; answered 204)."""

    update: Callable[..., Response]  # (request, <lookup>, partial=False)

    def partial_update(self, request: Request, **lookup: Any) -> Response:
        return self.update(request, partial=True, **lookup)

    def destroy(self, request: Request, **lookup: Any) -> Response:
        self.perform_destroy(self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    def perform_destroy(self, instance: Any) -> None:
        raise NotImplementedError


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
    """Fixed paths answered with and without the trailing slash: each ``(regex, view, name)``, the regex
    without its ``^`` and ``/?$``. One table a module, rather than one ``re_path`` call a route written out."""
    return [re_path(rf"^{regex}/?$", view.as_view(), name=name) for regex, view, name in routes]
