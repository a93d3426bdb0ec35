"""REST API of the catalog: products and expenses (``/api/v1/products/``, ``/api/v1/expenses/``), newsletter
signups (read at ``/api/v1/newsletter-signups/``, posted by the apps at ``/api/v1/pos/newsletter-signups``).

Products and expenses are addressed by their spec ``id`` (which may contain dots). Reads are open to keys
with the ``admin`` or the ``pos`` scope (the shop apps look products up); writes need ``admin``. Bodies are
read with ``read_json_body`` (numbers with a fraction as Decimal) and checked by the schema nodes of
``ledger.bodies.catalog``, so every error names its exact field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from django.db.models import Model, QuerySet
from django.http import Http404
from django.urls import re_path
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from accounts.authentication import ApiPrincipal
from accounts.models import Scope
from accounts.scoping import PosView, ReadOnlyViewSet
from core import api as toolkit
from core.api import reads
from core.api.credentials import INVALID_CREDENTIALS
from core.errors import InvalidInput
from core.nodes import Obj
from ledger.bodies.catalog import EXPENSE_BODIES, PRODUCT_BODIES, Bodies, PosNewsletterSignup, validated
from ledger.models import Product
from ledger.selectors import catalog as selectors
from ledger.serializers.catalog import (
    ExpenseOutputSerializer,
    ExpenseRequestSerializer,
    NewsletterSignupFilterSerializer,
    NewsletterSignupOutputSerializer,
    ProductFilterSerializer,
    ProductOutputSerializer,
    ProductRequestSerializer,
)
from ledger.services import catalog as services


class AdminWritesPosReads(BasePermission):
    """Reads for keys with the ``admin`` or the ``pos`` scope; writes for ``admin`` only."""

    def has_permission(self, request: Request, view: object) -> bool:
        principal = request.user
        if not isinstance(principal, ApiPrincipal):
            raise exceptions.NotAuthenticated(INVALID_CREDENTIALS)
        key = principal.api_key
        if request.method in SAFE_METHODS:
            if not (key.has_scope(Scope.ADMIN) or key.has_scope(Scope.POS)):
                raise exceptions.PermissionDenied("This API key lacks the 'admin' or the 'pos' scope.")
        elif not key.has_scope(Scope.ADMIN):
            raise exceptions.PermissionDenied("This API key lacks the 'admin' scope.")
        return True


# The 403 of a read by a key with neither scope (``AdminWritesPosReads``).
READS_FORBIDDEN: toolkit.Example = (
    "Missing scope",
    {"status": "ERROR", "message": "This API key lacks the 'admin' or the 'pos' scope."},
)


def checked(node: Obj, body: Any, *, partial: bool = False) -> dict[str, Any]:
    """``body`` validated by a schema node, or InvalidInput naming every offending field."""
    data, report = validated(node, body, partial=partial)
    if report.errors:
        raise InvalidInput(report.errors)
    return data


class CatalogViewSet(ReadOnlyViewSet, toolkit.WritesViewSet):
    """CRUD by the spec ``id`` (in the URL as ``{id}``, dots allowed): list, create, retrieve, PUT (omitted
    optional fields become absent), PATCH (only the given fields; ``null`` makes one absent), delete. Reads as
    every read-only view set; writes through the kind's ``writes`` (the catalog services)."""

    lookup_url_kwarg = "id"
    lookup_value_regex = "[^/]+"
    permission_classes = [AdminWritesPosReads]
    bodies: ClassVar[Bodies]
    writes: ClassVar[services.CatalogWrites]

    def get_object(self) -> Any:
        if "\x00" in self.kwargs.get(self.lookup_url_kwarg, ""):
            # No id holds a NUL (the schema refuses it), and PostgreSQL would fail on it: a 500.
            raise Http404
        return super().get_object()

    def answer(self, instance: Model, code: int = status.HTTP_200_OK) -> Response:
        return Response(self.output_serializer_class(instance).data, status=code)

    def create(self, request: Request) -> Response:
        data = checked(self.bodies.create, toolkit.read_json_body(request))
        return self.answer(self.writes.create(account=self.account, data=data), status.HTTP_201_CREATED)

    def update(self, request: Request, id: str, partial: bool = False) -> Response:
        instance = self.get_object()
        data = checked(
            self.bodies.patch if partial else self.bodies.replace, toolkit.read_json_body(request), partial=partial
        )
        return self.answer(self.writes.updated(instance, account=self.account, data=data, partial=partial))

    def perform_destroy(self, instance: Model) -> None:
        self.writes.deleted(instance, account=self.account)


def catalog(
    selector: Callable[..., QuerySet],
    request_serializer: type[serializers.Serializer],
    output_serializer: type[serializers.BaseSerializer],
    examples: tuple[dict[str, Any], dict[str, Any]],
    *,
    refused: toolkit.Example,
    filters: type[serializers.Serializer] | None = None,
    model: type[Model] | None = None,
) -> Callable[[type[CatalogViewSet]], type[CatalogViewSet]]:
    """Class decorator of a ``CatalogViewSet`` of the kind its ``writes`` name (``product``, ``expense``): the
    reads (``core.api.reads``), the lookup by ``<kind>_id`` and the schema, ``core.api.crud_schema`` with the
    catalog's rules (the POS reads too; PUT makes omitted optional fields absent). ``examples``: the body a
    client sends and the answer; ``refused`` a body every write refuses, as it answers it; ``filters`` described
    by the catalog's table."""
    request_example, example = examples
    reads_scope = "Keys with the `admin` or the `pos` scope."

    def decorate(view: type[CatalogViewSet]) -> type[CatalogViewSet]:
        noun = view.writes.keyword
        view.lookup_field = f"{noun}_id"
        schema = toolkit.crud_schema(
            tag=f"{noun}s",
            noun=noun,
            input_serializer=request_serializer,
            output_serializer=output_serializer,
            example=example,
            request=request_example,
            filters=CATALOG.filter_parameters(filters, noun=noun) if filters is not None else (),
            descriptions={
                "list": f"By id. {reads_scope}",
                "retrieve": reads_scope,
                "update": "Optional fields left out become absent. `id` may be left out; if given it must not change.",
                "partial_update": "Only the given fields change; `null` makes an optional field absent.",
            },
            errors={
                "list": {403: READS_FORBIDDEN},
                "retrieve": {403: READS_FORBIDDEN},
                **{write: {400: refused} for write in ("create", "update", "partial_update")},
            },
        )
        read = reads(selector, output=output_serializer, filters=filters, model=model)
        return schema(read(view))  # type: ignore[no-any-return]

    return decorate


# The catalog's list filters; its read-only view set (the newsletter signups) under their own tag.
CATALOG = toolkit.Area(
    "newsletter signups",
    filters={
        "search": "The product with this id or barcode, or any whose name contains this text.",
        "barcode": "Only products with exactly this barcode.",
        "product_group": "Only products of this product group.",
        "email": "Only signups of this e-mail address (case-insensitive).",
        "stock_location": "Only signups made in this stock location (identifier).",
    },
)

# --- Products ------------------------------------------------------------------------------------------

_AT = "2025-01-15T09:30:00Z"
PRODUCT_REQUEST_EXAMPLE: dict[str, Any] = {
    "id": "tshirt.basic.black",
    "name": {"da": "T-shirt, sort", "en": "T-shirt, black"},
    "barcode": "5701234567890",
    "product_group": "tops",
    "retail_price": {"dk": 199.95},
    "cost_price": 60.5,
    "taxes": [{"name": "VAT", "rate": 0.25, "type": "vat"}],
}
PRODUCT_EXAMPLE = {**PRODUCT_REQUEST_EXAMPLE, "created_at": _AT, "updated_at": _AT}


@catalog(
    selectors.products,
    ProductRequestSerializer,
    ProductOutputSerializer,
    (PRODUCT_REQUEST_EXAMPLE, PRODUCT_EXAMPLE),
    refused=toolkit.invalid("Negative cost price", ("cost_price", "must be at least 0", "out_of_range")),
    filters=ProductFilterSerializer,
    model=Product,
)
class ProductViewSet(CatalogViewSet):
    """Products of the account (spec: Product). Every change emits a product edit event for exports."""

    bodies = PRODUCT_BODIES
    writes = services.PRODUCT_WRITES


# --- Expenses ------------------------------------------------------------------------------------------

EXPENSE_REQUEST_EXAMPLE: dict[str, Any] = {
    "id": "coffee",
    "name": {"da": "Kaffe", "en": "Coffee"},
    "taxes": {"dk": [{"name": "VAT", "rate": 0.25, "type": "vat"}]},
}
EXPENSE_EXAMPLE = {**EXPENSE_REQUEST_EXAMPLE, "created_at": _AT}


@catalog(
    selectors.expenses,
    ExpenseRequestSerializer,
    ExpenseOutputSerializer,
    (EXPENSE_REQUEST_EXAMPLE, EXPENSE_EXAMPLE),
    refused=toolkit.invalid("Tax rate above 1", ("taxes.dk[0].rate", "must be at most 1", "out_of_range")),
)
class ExpenseViewSet(CatalogViewSet):
    """Expenses a register can book, e.g. coffee paid from the cash drawer (spec: Expense)."""

    bodies = EXPENSE_BODIES
    writes = services.EXPENSE_WRITES


# --- Newsletter signups --------------------------------------------------------------------------------

SIGNUP_REQUEST_EXAMPLE: dict[str, Any] = {
    "email": "jane@example.com",
    "first_name": "Jane",
    "last_name": "Doe",
    "register_id": "reg-1",
    "timestamp": 1736933400.5,
}
SIGNUP_EXAMPLE: dict[str, Any] = {
    "id": 17,
    "email": "jane@example.com",
    "stock_location": "shop-1",
    "register": "reg-1",
    "document": {
        "email": "jane@example.com",
        "first_name": "Jane",
        "last_name": "Doe",
        "source": {
            "market_id": "dk",
            "shop_id": "shop-1",
            "shop_name": "Copenhagen",
            "register_id": "reg-1",
            "register_name": "Till 1",
        },
        "timestamp": 1736933400.5,
    },
    "created_at": _AT,
}


@CATALOG.reads(
    selectors.newsletter_signups, NewsletterSignupOutputSerializer, NewsletterSignupFilterSerializer, SIGNUP_EXAMPLE
)
class NewsletterSignupViewSet(ReadOnlyViewSet):
    """Newsletter signups posted by the POS apps, newest first, each exported as a newsletter signup event."""


class NewsletterSignupPosView(PosView):
    """``POST /api/v1/pos/newsletter-signups``: the newsletter form of the POS or second-screen app."""

    @extend_schema(
        tags=["pos"],
        summary="Sign up for the newsletter",
        description=(
            "Every post is one newsletter signup event (the same address twice is two events). "
            "`register_id` sets the shop too; `shop_id` alone names a stock location."
        ),
        parameters=toolkit.AUTH_PARAMETERS,
        request={"application/json": PosNewsletterSignup},
        responses={201: NewsletterSignupOutputSerializer, **toolkit.error_responses(400, scope="pos")},
        examples=[
            toolkit.request_example("newsletter signup", SIGNUP_REQUEST_EXAMPLE),
            toolkit.response_example("newsletter signup", SIGNUP_EXAMPLE, status_code=201),
        ],
    )
    def post(self, request: Request) -> Response:
        data = PosNewsletterSignup.validated(self.body())
        signup, created = services.record_newsletter_signup(account=self.account, data=data)
        answer = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(NewsletterSignupOutputSerializer(signup).data, status=answer)


pos_urls: list[Any] = [
    re_path(r"^pos/newsletter-signups/?$", NewsletterSignupPosView.as_view(), name="pos-newsletter-signups"),
]


def register(router: SimpleRouter) -> None:
    """Routes of this area under /api/v1/."""
    router.register("products", ProductViewSet, basename="product")
    router.register("expenses", ExpenseViewSet, basename="expense")
    router.register("newsletter-signups", NewsletterSignupViewSet, basename="newsletter-signup")
