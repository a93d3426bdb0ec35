"""The back-office REST API (``/api/v1/``) for the shop structure and API keys.

Markets, stock locations, registers, cashiers and integrations are addressed by ``identifier``; API keys
by id. Every query runs through a selector with the caller's account, so another account's object is a
404. What the other apps' APIs share is ``core.api`` (the toolkit) and ``accounts.scoping`` (the caller).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from django.db.models import Model, QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from accounts import selectors, services
from accounts.models import Integration, default_payment_types
from accounts.scoping import ReadOnlyViewSet, ReadsViewSet
from accounts.serializers import (
    ApiKeyCreatedOutputSerializer,
    ApiKeyInputSerializer,
    ApiKeyOutputSerializer,
    AuditEntryOutputSerializer,
    AuditLogFilterSerializer,
    CashierInputSerializer,
    CashierOutputSerializer,
    IntegrationInputSerializer,
    IntegrationOutputSerializer,
    MarketInputSerializer,
    MarketOutputSerializer,
    RegisterInputSerializer,
    RegisterOutputSerializer,
    StockLocationInputSerializer,
    StockLocationOutputSerializer,
)
from core.api import (
    AUTH_PARAMETERS,
    Area,
    Example,
    WritesViewSet,
    conflict,
    crud_schema,
    error_responses,
    invalid,
    read_operations,
    reads,
    refusal,
    request_example,
    response_example,
)

# --- The shop structure: plain configuration CRUD by identifier ------------------------------------


class ConfigViewSet(ReadsViewSet, WritesViewSet):
    """List, create, retrieve, update (PUT resets omitted optional fields, PATCH does not) and delete, by
    identifier; the reads through the selector and the writes through the ``save`` service ``configures`` sets."""

    lookup_field = "identifier"
    # Identifiers may contain dots (e.g. "shop.1"), which DRF's default lookup pattern excludes.
    lookup_value_regex = "[^/]+"
    input_serializer_class: ClassVar[type[serializers.Serializer]]

    def perform_save(self, *, instance: Any, data: dict[str, Any]) -> Model:
        raise NotImplementedError

    def perform_destroy(self, instance: Any) -> None:
        services.delete_account_object(account=self.account, instance=instance)

    def create(self, request: Request) -> Response:
        data = self.validated(self.input_serializer_class, request.data)
        instance = self.perform_save(instance=None, data=data)
        return Response(self.output_serializer_class(instance).data, status=status.HTTP_201_CREATED)

    def update(self, request: Request, identifier: str, partial: bool = False) -> Response:
        instance = self.get_object()
        data = self.validated(self.input_serializer_class, request.data, partial=partial)
        instance = self.perform_save(instance=instance, data=data)
        return Response(self.output_serializer_class(instance).data)


def configures(
    selector: Callable[..., QuerySet],
    save: Callable[..., Model],
    input_serializer: type[serializers.Serializer],
    output_serializer: type[serializers.ModelSerializer],
    example: dict[str, Any],
    *,
    refused: Example,
    still_used: Example | None = None,
    delete_conflict: bool = True,
) -> Callable[[type[ConfigViewSet]], type[ConfigViewSet]]:
    """Class decorator of a ``ConfigViewSet`` of one model (the output serializer's): reads through ``selector``
    (``core.api.reads``), saves through ``save``, an accounts service that takes the row under the model's name
    (``save_stock_location(account=..., stock_location=..., data=...)``), and its schema: tagged with the model's
    plural, examples for every response shape (``example`` as the view answers it; as a request, without
    ``created_at``; ``refused`` a body it refuses, as every write answers it). A delete of an object another one
    may use answers 409 while it does (``delete_conflict``; ``still_used``, that answer)."""
    model: type[Model] = output_serializer.Meta.model
    keyword = re.sub(r"(?<!^)(?=[A-Z])", "_", model.__name__).lower()
    noun = str(model._meta.verbose_name)
    schema = crud_schema(
        tag=f"{noun}s",
        noun=noun,
        input_serializer=input_serializer,
        output_serializer=output_serializer,
        example=example,
        request={k: v for k, v in example.items() if k != "created_at"},
        descriptions={"update": "Optional fields left out are reset to their defaults."},
        delete_conflict=delete_conflict,
        article="a",  # as the configuration pages have always been summarised ("Get a integration")
        errors={
            **{write: {400: refused} for write in ("create", "update", "partial_update")},
            "destroy": {409: still_used} if still_used is not None else {},
        },
    )

    def perform_save(self: ConfigViewSet, *, instance: Model | None, data: dict[str, Any]) -> Model:
        return save(account=self.account, **{keyword: instance}, data=data)

    def decorate(view: type[ConfigViewSet]) -> type[ConfigViewSet]:
        view.input_serializer_class = input_serializer
        view.perform_save = perform_save  # type: ignore[method-assign]
        return schema(reads(selector, output=output_serializer)(view))  # type: ignore[no-any-return]

    return decorate


_CREATED = "2025-01-15T09:30:00Z"
MARKET_EXAMPLE = {
    "identifier": "dk",
    "name": "Denmark",
    "currency": "DKK",
    "default_taxes": [{"name": "VAT", "rate": 0.25, "type": "vat"}],
    "created_at": _CREATED,
}


@configures(
    selectors.markets,
    services.save_market,
    MarketInputSerializer,
    MarketOutputSerializer,
    MARKET_EXAMPLE,
    refused=invalid("Invalid currency", ("currency", "'XYZ' is not an ISO 4217 currency code.", None)),
    still_used=conflict(
        "Still in use", "The market 'dk' is still used (stock location: shop-1) and cannot be deleted."
    ),
)
class MarketViewSet(ConfigViewSet):
    """Markets, by identifier (e.g. ``dk``): a currency and the default taxes of the shops in it."""


STOCK_LOCATION_EXAMPLE = {
    "identifier": "shop-1",
    "name": "Copenhagen",
    "kind": "shop",
    "market": "dk",
    "street": "Vesterbrogade 1",
    "city": "København V",
    "zip": "1620",
    "country_code": "DK",
    "vat_number": "DK12345678",
    "created_at": _CREATED,
}


@configures(
    selectors.stock_locations,
    services.save_stock_location,
    StockLocationInputSerializer,
    StockLocationOutputSerializer,
    STOCK_LOCATION_EXAMPLE,
    refused=invalid("Invalid country code", ("country_code", "Use an ISO 3166-1 alpha-2 code, e.g. DK.", None)),
    still_used=conflict(
        "Still in use", "The stock location 'shop-1' is still used (register: reg-1) and cannot be deleted."
    ),
)
class StockLocationViewSet(ConfigViewSet):
    """Shops and warehouses, by identifier (e.g. ``shop-1``); ``market`` is a market identifier."""


REGISTER_EXAMPLE = {
    "identifier": "register-1",
    "name": "Till 1",
    "stock_location": "shop-1",
    "payment_types": default_payment_types(),
    "created_at": _CREATED,
}


@configures(
    selectors.registers,
    services.save_register,
    RegisterInputSerializer,
    RegisterOutputSerializer,
    REGISTER_EXAMPLE,
    refused=refusal(
        "Unknown stock location", "Unknown stock location 'nowhere'.", field="stock_location", code="unknown"
    ),
    # A register in use has periods, which the answer names by their ids: no one example.
)
class RegisterViewSet(ConfigViewSet):
    """Registers, by identifier; ``stock_location`` is a stock location identifier."""


CASHIER_EXAMPLE = {
    "identifier": "cashier-7",
    "display_name": "AB",
    "full_name": "Anne Berg",
    "image_url": "https://images.example.com/cashiers/anne-berg.png",
    "created_at": _CREATED,
}


@configures(
    selectors.cashiers,
    services.save_cashier,
    CashierInputSerializer,
    CashierOutputSerializer,
    CASHIER_EXAMPLE,
    refused=invalid("Not an https image", ("image_url", "Use an https URL.", None)),
    delete_conflict=False,  # nothing refers to a cashier row
)
class CashierViewSet(ConfigViewSet):
    """Cashiers (store associates), by identifier (spec: Cashier)."""


INTEGRATION_EXAMPLE = {"identifier": "webshop", "name": "Web shop", "created_at": _CREATED}


@configures(
    selectors.integrations,
    services.save_integration,
    IntegrationInputSerializer,
    IntegrationOutputSerializer,
    INTEGRATION_EXAMPLE,
    refused=invalid(
        "Invalid identifier", ("identifier", "Use letters, digits and . _ : - (starting with a letter or digit).", None)
    ),
    still_used=conflict(
        "The caller's own integration",
        "The integration 'webshop' is the one this request is authenticated with; delete it with a key of another "
        "integration.",
    ),
)
class IntegrationViewSet(ConfigViewSet):
    """Integrations, by identifier: each has its own API keys and import log."""

    def perform_destroy(self, instance: Integration) -> None:
        services.delete_integration(account=self.account, integration=instance, acting_api_key=self.api_key)


# --- API keys ---------------------------------------------------------------------------------------

API_KEY_EXAMPLE = {
    "id": 12,
    "prefix": "3f9a1c07",
    "name": "Back-office sync",
    "scopes": ["admin", "imports"],
    "integration": "webshop",
    "created_at": _CREATED,
    "last_used_at": "2025-01-15T10:02:11Z",
    "revoked_at": None,
    "active": True,
}
API_KEY_CREATED_EXAMPLE = {
    **API_KEY_EXAMPLE,
    "last_used_at": None,
    "key": "rk_3f9a1c07Yk2mP0w5vQe8Rz1TtB6nLs4HdJ9uXa3cFg7",
}
API_KEY_REVOKED_EXAMPLE = {**API_KEY_EXAMPLE, "revoked_at": "2025-02-01T08:00:00Z", "active": False}


@extend_schema_view(
    **read_operations(
        noun="API key",
        output_serializer=ApiKeyOutputSerializer,
        example=API_KEY_EXAMPLE,
        list_description="Revoked keys included. The key itself is never shown again after creation.",
    ),
    create=extend_schema(
        summary="Create an API key",
        parameters=AUTH_PARAMETERS,
        request=ApiKeyInputSerializer,
        responses={201: ApiKeyCreatedOutputSerializer, **error_responses(400)},
        examples=[
            request_example(
                "New key", {"integration": "webshop", "scopes": ["admin", "imports"], "name": "Back-office sync"}
            ),
            response_example("New key", API_KEY_CREATED_EXAMPLE, status_code=201),
        ],
    ),
    revoke=extend_schema(
        summary="Revoke an API key",
        parameters=AUTH_PARAMETERS,
        request=None,
        responses={200: ApiKeyOutputSerializer, **error_responses(404)},
        examples=[response_example("Revoked key", API_KEY_REVOKED_EXAMPLE)],
    ),
)
@extend_schema(tags=["api keys"])
@reads(selectors.api_keys, output=ApiKeyOutputSerializer)
class ApiKeyViewSet(ReadsViewSet):
    """API keys of the account's integrations, by id. Only a hash of a key is stored."""

    def create(self, request: Request) -> Response:
        """The answer holds the key in `key`; it is shown this once and stored only as a hash."""
        data = self.validated(ApiKeyInputSerializer, request.data)
        api_key, raw_key = services.create_api_key(
            account=self.account,
            integration=data["integration"],
            scopes=data["scopes"],
            name=data["name"],
        )
        body = ApiKeyCreatedOutputSerializer(api_key, context={"raw_key": raw_key}).data
        return Response(body, status=status.HTTP_201_CREATED)

    @action(detail=True, methods=["post"])
    def revoke(self, request: Request, pk: str) -> Response:
        """Idempotent: revoking a revoked key keeps its first revocation time."""
        api_key = services.revoke_api_key(account=self.account, api_key=self.get_object())
        return Response(ApiKeyOutputSerializer(api_key).data)


# --- The audit trail ------------------------------------------------------------------------------------

AUDIT_ENTRY_EXAMPLE = {
    "id": 981,
    "at": "2025-01-15T09:31:12Z",
    "actor_kind": "api_key",
    "actor": "key 3f9a1c07… (webshop)",
    "action": "changed",
    "target_type": "stock_location",
    "target_id": "shop-1",
    "target": "Copenhagen",
    "changes": {"name": ["Copenhagen", "Copenhagen Vesterbro"], "city": ["København", "København V"]},
}

AUDIT_LOG = Area(
    "audit log",
    filters={
        "target_type": "Only changes of objects of this type (`export_queue`, `api_key`, `member`, `market`, ...).",
        "target_id": "Only changes of the object with this id or identifier (with `target_type`).",
        "actor": "Only changes by this actor, as entries show it (an e-mail address, `key <prefix>… (<integration>)`, "
        "`system`).",
        "actor_kind": "Only changes by people, API keys or the system.",
    },
)


@AUDIT_LOG.reads(selectors.audit_entries, AuditEntryOutputSerializer, AuditLogFilterSerializer, AUDIT_ENTRY_EXAMPLE)
class AuditLogViewSet(ReadOnlyViewSet):
    """Every change made in the account, by a person, an API key or the system, newest first; never changed or
    deleted. Keys with the `admin` scope."""


def register(router: SimpleRouter) -> None:
    """Routes of this app under /api/v1/."""
    router.register("markets", MarketViewSet, basename="market")
    router.register("stock-locations", StockLocationViewSet, basename="stock-location")
    router.register("registers", RegisterViewSet, basename="register")
    router.register("cashiers", CashierViewSet, basename="cashier")
    router.register("integrations", IntegrationViewSet, basename="integration")
    router.register("api-keys", ApiKeyViewSet, basename="api-key")
    router.register("audit-log", AuditLogViewSet, basename="audit-entry")
