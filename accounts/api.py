"""The back-office REST API (``/api/v1/``) for the shop structure and API keys.

Markets, stock locations, registers, cashiers and integrations are addressed by ``identifier``; API keys
by id. Every query runs through a selector with the caller's account, so another account's object is a
404. What the other apps' APIs share is ``core.api`` (the toolkit) and ``accounts.scoping`` (the caller).
"""

from __future__ import annotations

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
from accounts.models import Cashier, Integration, Market, Register, StockLocation
from accounts.scoping import AccountScopedViewSet, ReadsViewSet
from accounts.serializers import (
    ApiKeyCreatedOutputSerializer,
    ApiKeyInputSerializer,
    ApiKeyOutputSerializer,
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
    crud_schema,
    error_responses,
    read_operations,
    reads,
    request_example,
    response_example,
)

# --- The shop structure: plain configuration CRUD by identifier ------------------------------------


class ConfigViewSet(AccountScopedViewSet):
    """List, create, retrieve, update (PUT resets omitted optional fields, PATCH does not) and delete."""

    lookup_field = "identifier"
    # Identifiers may contain dots (e.g. "shop.1"), which DRF's default lookup pattern excludes.
    lookup_value_regex = "[^/]+"
    input_serializer_class: ClassVar[type[serializers.Serializer]]
    output_serializer_class: ClassVar[type[serializers.ModelSerializer]]

    def get_serializer_class(self) -> type[serializers.BaseSerializer]:
        return self.output_serializer_class

    def perform_save(self, *, instance: Any, data: dict[str, Any]) -> Model:
        raise NotImplementedError

    def perform_delete(self, *, instance: Any) -> None:
        services.delete_account_object(account=self.account, instance=instance)

    def list(self, request: Request) -> Response:
        return self.paginated(self.get_queryset(), self.output_serializer_class)

    def retrieve(self, request: Request, identifier: str) -> Response:
        return Response(self.output_serializer_class(self.get_object()).data)

    def create(self, request: Request) -> Response:
        data = self.validated(self.input_serializer_class, request.data)
        instance = self.perform_save(instance=None, data=data)
        return Response(self.output_serializer_class(instance).data, status=status.HTTP_201_CREATED)

    def update(self, request: Request, identifier: str, partial: bool = False) -> Response:
        instance = self.get_object()
        data = self.validated(self.input_serializer_class, request.data, partial=partial)
        instance = self.perform_save(instance=instance, data=data)
        return Response(self.output_serializer_class(instance).data)

    def partial_update(self, request: Request, identifier: str) -> Response:
        return self.update(request, identifier, partial=True)

    def destroy(self, request: Request, identifier: str) -> Response:
        self.perform_delete(instance=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)


def config_schema(
    *, tag: str, noun: str, example: dict[str, Any], delete_conflict: bool = True
) -> Callable[[type[ConfigViewSet]], type[ConfigViewSet]]:
    """``extend_schema_view`` of a ``ConfigViewSet``, from its serializers: one tag, examples for every response
    shape (``example`` as the view answers it; as a request, without ``created_at``). Every configured object can
    be in use by another (``delete_conflict``: a delete may answer 409)."""

    def decorate(view: type[ConfigViewSet]) -> type[ConfigViewSet]:
        schema = crud_schema(
            tag=tag,
            noun=noun,
            input_serializer=view.input_serializer_class,
            output_serializer=view.output_serializer_class,
            example=example,
            request={k: v for k, v in example.items() if k != "created_at"},
            descriptions={"update": "Optional fields left out are reset to their defaults."},
            delete_conflict=delete_conflict,
            article="a",  # as the configuration pages have always been summarised ("Get a integration")
        )
        return schema(view)

    return decorate


_CREATED = "2025-01-15T09:30:00Z"
MARKET_EXAMPLE = {
    "identifier": "dk",
    "name": "Denmark",
    "currency": "DKK",
    "default_taxes": [{"name": "VAT", "rate": 0.25, "type": "vat"}],
    "created_at": _CREATED,
}
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
REGISTER_EXAMPLE = {
    "identifier": "register-1",
    "name": "Till 1",
    "stock_location": "shop-1",
    "payment_types": [
        {"identifier": "cash", "should_be_reconciled": True},
        {"identifier": "card.external", "should_be_reconciled": False},
    ],
    "created_at": _CREATED,
}
CASHIER_EXAMPLE = {
    "identifier": "cashier-7",
    "display_name": "AB",
    "full_name": "Anne Berg",
    "image_url": "https://images.example.com/cashiers/anne-berg.png",
    "created_at": _CREATED,
}
INTEGRATION_EXAMPLE = {"identifier": "webshop", "name": "Web shop", "created_at": _CREATED}


@config_schema(tag="markets", noun="market", example=MARKET_EXAMPLE)
class MarketViewSet(ConfigViewSet):
    """Markets, by identifier (e.g. ``dk``): a currency and the default taxes of the shops in it."""

    queryset = Market.objects.none()
    input_serializer_class = MarketInputSerializer
    output_serializer_class = MarketOutputSerializer

    def get_queryset(self) -> QuerySet[Market]:
        return selectors.markets(account=self.account)

    def perform_save(self, *, instance: Market | None, data: dict[str, Any]) -> Market:
        return services.save_market(account=self.account, market=instance, data=data)


@config_schema(tag="stock locations", noun="stock location", example=STOCK_LOCATION_EXAMPLE)
class StockLocationViewSet(ConfigViewSet):
    """Shops and warehouses, by identifier (e.g. ``shop-1``); ``market`` is a market identifier."""

    queryset = StockLocation.objects.none()
    input_serializer_class = StockLocationInputSerializer
    output_serializer_class = StockLocationOutputSerializer

    def get_queryset(self) -> QuerySet[StockLocation]:
        return selectors.stock_locations(account=self.account)

    def perform_save(self, *, instance: StockLocation | None, data: dict[str, Any]) -> StockLocation:
        return services.save_stock_location(account=self.account, stock_location=instance, data=data)


@config_schema(tag="registers", noun="register", example=REGISTER_EXAMPLE)
class RegisterViewSet(ConfigViewSet):
    """Registers, by identifier; ``stock_location`` is a stock location identifier."""

    queryset = Register.objects.none()
    input_serializer_class = RegisterInputSerializer
    output_serializer_class = RegisterOutputSerializer

    def get_queryset(self) -> QuerySet[Register]:
        return selectors.registers(account=self.account)

    def perform_save(self, *, instance: Register | None, data: dict[str, Any]) -> Register:
        return services.save_register(account=self.account, register=instance, data=data)


@config_schema(tag="cashiers", noun="cashier", example=CASHIER_EXAMPLE)
class CashierViewSet(ConfigViewSet):
    """Cashiers (store associates), by identifier (spec: Cashier)."""

    queryset = Cashier.objects.none()
    input_serializer_class = CashierInputSerializer
    output_serializer_class = CashierOutputSerializer

    def get_queryset(self) -> QuerySet[Cashier]:
        return selectors.cashiers(account=self.account)

    def perform_save(self, *, instance: Cashier | None, data: dict[str, Any]) -> Cashier:
        return services.save_cashier(account=self.account, cashier=instance, data=data)


@config_schema(tag="integrations", noun="integration", example=INTEGRATION_EXAMPLE)
class IntegrationViewSet(ConfigViewSet):
    """Integrations, by identifier: each has its own API keys and import log."""

    queryset = Integration.objects.none()
    input_serializer_class = IntegrationInputSerializer
    output_serializer_class = IntegrationOutputSerializer

    def get_queryset(self) -> QuerySet[Integration]:
        return selectors.integrations(account=self.account)

    def perform_save(self, *, instance: Integration | None, data: dict[str, Any]) -> Integration:
        return services.save_integration(account=self.account, integration=instance, data=data)

    def perform_delete(self, *, instance: Integration) -> None:
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
        description="The answer holds the key in `key`; it is shown this once and stored only as a hash.",
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
        description="Idempotent: revoking a revoked key keeps its first revocation time.",
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
        data = self.validated(ApiKeyInputSerializer, request.data)
        api_key, raw_key = services.issue_api_key(
            account=self.account,
            integration_identifier=data["integration"],
            scopes=data["scopes"],
            name=data["name"],
        )
        body = ApiKeyCreatedOutputSerializer(api_key, context={"raw_key": raw_key}).data
        return Response(body, status=status.HTTP_201_CREATED)

    @action(detail=True, methods=["post"])
    def revoke(self, request: Request, pk: str) -> Response:
        api_key = services.revoke_api_key(account=self.account, api_key=self.get_object())
        return Response(ApiKeyOutputSerializer(api_key).data)


def register(router: SimpleRouter) -> None:
    """Routes of this app under /api/v1/."""
    router.register("markets", MarketViewSet, basename="market")
    router.register("stock-locations", StockLocationViewSet, basename="stock-location")
    router.register("registers", RegisterViewSet, basename="register")
    router.register("cashiers", CashierViewSet, basename="cashier")
    router.register("integrations", IntegrationViewSet, basename="integration")
    router.register("api-keys", ApiKeyViewSet, basename="api-key")
