"""What the other apps' APIs need of accounts: who the caller is.

The API toolkit is ``core.api`` (pagination, the error handler, the view-set bases, the schema helpers); it knows
no app, so it cannot name the account. Scoping stays here because it needs the account models: the caller's
account and key come from the principal ``ApiKeyAuthentication`` sets, and :class:`AccountScoped` gives them to
``core.api``'s view-set bases (``ReadsViewSet``, ``ReadOnlyViewSet``) and to the POS API's base view. Also
the OpenAPI description of the key authentication (drf-spectacular finds it by the class's dotted path).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.settings import spectacular_settings
from rest_framework.views import APIView

from accounts.authentication import ApiKeyAuthentication, ApiPrincipal, HasPosScope
from accounts.models import Account, ApiKey
from core import api, budget


class AccountScoped:
    """The caller's account and API key, from the principal the authentication set (a view's permission class
    let only an authenticated principal through). Every selector and service is called with ``account``."""

    request: Any  # the view's: a DRF Request

    @property
    def account(self) -> Account:
        principal = self.request.user
        assert isinstance(principal, ApiPrincipal)  # the permission class let the request through
        return principal.account

    @property
    def api_key(self) -> ApiKey:
        principal = self.request.user
        assert isinstance(principal, ApiPrincipal)
        return principal.api_key


class ReadsViewSet(AccountScoped, api.ReadsViewSet):
    """``core.api.ReadsViewSet`` scoped to the caller's account."""


class ReadOnlyViewSet(AccountScoped, api.ReadOnlyViewSet):
    """``core.api.ReadOnlyViewSet`` scoped to the caller's account."""


class PosView(AccountScoped, APIView):
    """Base of the POS API (``/api/v1/pos/...``): keys with the ``pos`` scope; the body is read by
    ``read_json_body`` (parsed by the request middleware, within ``API_MAX_BODY_BYTES``). The integrator calls
    a request makes share ``POS_INTEGRATION_BUDGET_SECONDS`` (``core.budget``): a shop app never waits on a dead
    integrator for long, and neither does the web worker serving it."""

    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [HasPosScope]
    parser_classes: list[type] = []

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        seconds = settings.POS_INTEGRATION_BUDGET_SECONDS
        if seconds <= 0:
            return super().dispatch(request, *args, **kwargs)
        with budget.limit(seconds):
            return super().dispatch(request, *args, **kwargs)

    def body(self) -> Any:
        return api.read_json_body(self.request)


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
