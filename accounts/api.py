"""The back-office REST API (``/api/v1/``) for the shop structure and API keys.

Markets, stock locations, registers, cashiers and integrations are addressed by ``identifier``; API keys
by id. Every query runs through a selector with the caller's account, so another account's object is a
404. Also home to what the other apps' ``api.py`` share: the account-scoped base view set, the
OpenAPI description of the API key authentication and of the error bodies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from django.db.models import Model, QuerySet
from django.http import Http404
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.settings import spectacular_settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from accounts import selectors, services
from accounts.authentication import INVALID_CREDENTIALS, ApiPrincipal
from accounts.models import Account, ApiKey, Cashier, Integration, Market, Register, StockLocation
from accounts.serializers import (
    ApiKeyCreatedOutputSerializer,
    ApiKeyInputSerializer,
    ApiKeyOutputSerializer,
    CashierInputSerializer,
    CashierOutputSerializer,
    ErrorOutputSerializer,
    IntegrationInputSerializer,
    IntegrationOutputSerializer,
    MarketInputSerializer,
    MarketOutputSerializer,
    RegisterInputSerializer,
    RegisterOutputSerializer,
    StockLocationInputSerializer,
    StockLocationOutputSerializer,
)
from core.api import reads

# --- Shared by every app's api.py -----------------------------------------------------------------


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    """OpenAPI description of ``ApiKeyAuthentication``: the key in ``apikey`` or as a Bearer token."""

    target_class = "accounts.authentication.ApiKeyAuthentication"
    name = ["apikey", "bearer"]

    def get_security_definition(self, auto_schema: Any) -> list[dict[str, Any]]:
        return [
            {
                "type": "apiKey",
                "in": "query",
                "name": "apikey",
                "description": "The API key; `account` and `integration` go in the query too.",
            },
            {
                "type": "http",
                "scheme": "bearer",
                "description": "The API key as a Bearer token; `account` and `integration` go in the query.",
            },
        ]

    def get_security_requirement(  # type: ignore[override]  # spectacular skips a None requirement
        self, auto_schema: Any
    ) -> list[dict[str, list[str]]] | None:
        if spectacular_settings.SECURITY:
            return None  # SPECTACULAR_SETTINGS["SECURITY"] already lists both on every operation
        # Either one: a list of requirement objects is an OR in OpenAPI.
        return [{"apikey": []}, {"bearer": []}]


AUTH_PARAMETERS = [
    OpenApiParameter(
        "account", OpenApiTypes.STR, OpenApiParameter.QUERY, required=True, description="Account identifier."
    ),
    OpenApiParameter(
        "integration",
        OpenApiTypes.STR,
        OpenApiParameter.QUERY,
        required=True,
        description="Identifier of the integration the API key belongs to.",
    ),
]

_ERROR_EXAMPLES: dict[int, tuple[str, dict[str, Any]]] = {
    400: (
        "Invalid input",
        {
            "status": "ERROR",
            "message": "The request is invalid.",
            "errors": [{"field": "currency", "message": "'XYZ' is not an ISO 4217 currency code."}],
        },
    ),
    401: ("Invalid credentials", {"status": "ERROR", "message": INVALID_CREDENTIALS}),
    403: ("Missing scope", {"status": "ERROR", "message": "This API key lacks the 'admin' scope."}),
    404: ("Not found", {"status": "ERROR", "message": "Not found."}),
    409: (
        "Still in use",
        {
            "status": "ERROR",
            "message": "The market 'dk' is still used (stock location: shop-1) and cannot be deleted.",
        },
    ),
}


def error_responses(*codes: int) -> dict[int, OpenApiResponse]:
    """OpenAPI responses for these error statuses plus 401 and 403, which every endpoint can answer."""
    responses = {}
    for code in sorted({401, 403, *codes}):
        summary, value = _ERROR_EXAMPLES[code]
        responses[code] = OpenApiResponse(
            ErrorOutputSerializer,
            description=summary,
            examples=[OpenApiExample(summary, value=value, status_codes=[code], response_only=True)],
        )
    return responses


def response_example(name: str, value: dict[str, Any], *, status_code: int = 200) -> OpenApiExample:
    return OpenApiExample(name, value=value, status_codes=[status_code], response_only=True)


def error_example(name: str, message: str, *, status_code: int, field: str | None = None) -> OpenApiExample:
    """An error answer's example: its ``message`` and, when it is about one ``field``, the error naming it."""
    value: dict[str, Any] = {"status": "ERROR", "message": message}
    if field is not None:
        value["errors"] = [{"field": field, "message": message, "code": "invalid"}]
    return response_example(name, value, status_code=status_code)


def request_example(name: str, value: dict[str, Any]) -> OpenApiExample:
    return OpenApiExample(name, value=value, request_only=True)


_MAX_ID = 2**63 - 1


def _is_id(value: str) -> bool:
    # The length first: int() of a 5,000-digit string is refused by Python itself (and slow below that).
    return len(value) <= 19 and value.isascii() and value.isdigit() and int(value) <= _MAX_ID


class AccountScopedViewSet(viewsets.GenericViewSet):
    """A view set whose every query goes through a selector with the caller's account.

    Subclasses set ``queryset = Model.objects.none()`` (the model, for the schema; never a query) and
    implement ``get_queryset()`` with a selector, so ``get_object()`` of another account's row is a 404.
    """

    @property
    def account(self) -> Account:
        principal = self.request.user
        assert isinstance(principal, ApiPrincipal)  # HasAdminScope let the request through
        return principal.account

    @property
    def api_key(self) -> ApiKey:
        principal = self.request.user
        assert isinstance(principal, ApiPrincipal)
        return principal.api_key

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


class ReadsViewSet(AccountScopedViewSet):
    """A filtered, paginated list and a retrieve by id, both through ``select()`` (a selector call, set by
    ``core.api.reads``); a view set that also writes (API keys, runtime integrations) adds its writes to these."""

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

    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(self.output_serializer_class(self.get_object()).data)


class ReadOnlyViewSet(ReadsViewSet):
    """Only the reads: a list and a retrieve."""


def read_operations(
    *,
    noun: str,
    output_serializer: type[serializers.BaseSerializer],
    example: dict[str, Any],
    example_name: str = "",
    list_description: str = "",
    filters: Sequence[OpenApiParameter] = (),
    tags: Sequence[str] = (),
) -> dict[str, Any]:
    """The schemas of a view set's list and retrieve, for ``extend_schema_view(**...)``: ``example`` answered
    by both (named ``example_name``, the noun by default), ``filters`` the list's query parameters."""
    article = "an" if noun[0].lower() in "aeiou" else "a"
    common: dict[str, Any] = {"examples": [response_example(example_name or noun, example)]}
    if tags:
        common["tags"] = list(tags)
    listing: dict[str, Any] = {
        "summary": f"List {noun}s",
        "parameters": [*AUTH_PARAMETERS, *filters],
        "responses": {200: output_serializer(many=True), **error_responses(400)},
        **common,
    }
    if list_description:
        listing["description"] = list_description
    retrieve = extend_schema(
        summary=f"Get {article} {noun}",
        parameters=AUTH_PARAMETERS,
        responses={200: output_serializer, **error_responses(404)},
        **common,
    )
    return {"list": extend_schema(**listing), "retrieve": retrieve}


def read_only_schema(*, tag: str, noun: str, output_serializer: type[serializers.Serializer], **options: Any) -> Any:
    """``extend_schema_view`` of a ``ReadOnlyViewSet``: its ``read_operations`` under one tag."""
    return extend_schema_view(**read_operations(noun=noun, output_serializer=output_serializer, tags=[tag], **options))


def filter_parameter(name: str, description: str, *, enum: list[str] | None = None) -> OpenApiParameter:
    return OpenApiParameter(name, OpenApiTypes.STR, OpenApiParameter.QUERY, description=description, enum=enum)


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


# The operations of a view set that lists, creates, reads, replaces, changes and deletes: summary, the status of a
# success, whether the request has a body, the error statuses.
_CRUD_OPERATIONS = {
    "list": ("List {noun}s", 200, False, (400,)),
    "create": ("Create {article} {noun}", 201, True, (400,)),
    "retrieve": ("Get {article} {noun}", 200, False, (404,)),
    "update": ("Replace {article} {noun}", 200, True, (400, 404)),
    "partial_update": ("Change fields of {article} {noun}", 200, True, (400, 404)),
    "destroy": ("Delete {article} {noun}", 204, False, (404,)),
}


def crud_schema(
    *,
    tag: str,
    noun: str,
    input_serializer: type[serializers.Serializer],
    output_serializer: type[serializers.BaseSerializer],
    example: dict[str, Any],
    request: dict[str, Any],
    descriptions: Mapping[str, str],
    filters: Sequence[OpenApiParameter] = (),
    delete_conflict: bool = False,
    article: str = "",
) -> Any:
    """``extend_schema_view`` of a view set with the six operations above: one tag, examples for every response
    shape (``example`` as the view answers it, ``request`` as a client sends it), a description per operation
    (``descriptions``), ``filters`` on the list; ``delete_conflict``: a delete may answer 409 (in use)."""
    article = article or ("an" if noun[0] in "aeiou" else "a")
    one = [response_example(noun, example), response_example(noun, example, status_code=201)]
    body = [request_example(noun, request)]
    operations: dict[str, Any] = {}
    for operation, (summary, success, has_body, errors) in _CRUD_OPERATIONS.items():
        schema: dict[str, Any] = {
            "tags": [tag],
            "summary": summary.format(noun=noun, article=article),
            "parameters": [*AUTH_PARAMETERS, *filters] if operation == "list" else AUTH_PARAMETERS,
        }
        if operation in descriptions:
            schema["description"] = descriptions[operation]
        if has_body:
            schema["request"] = input_serializer
        if operation == "destroy":
            schema["responses"] = {204: None, **error_responses(*errors, *((409,) if delete_conflict else ()))}
        else:
            answer = output_serializer(many=True) if operation == "list" else output_serializer
            schema["responses"] = {success: answer, **error_responses(*errors)}
            schema["examples"] = (
                [response_example(noun, example)] if operation == "list" else [*body, *one] if has_body else one
            )
        operations[operation] = extend_schema(**schema)
    return extend_schema_view(**operations)


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
