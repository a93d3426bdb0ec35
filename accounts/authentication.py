"""API key authentication for the import endpoints and the REST API.

Credentials: the query parameters ``account``, ``integration`` and ``apikey`` (a legacy
``accountkey`` parameter is accepted and ignored), or ``Authorization: Bearer <apikey>`` with
``account`` and ``integration`` in the query. Any mismatch answers the same 401; too many of them from one
address answer 429 for a while, the right key included; too many with one key prefix answer 429 to every failure
with that prefix, but never to the right key (``accounts.auth_failures``).
"""

from __future__ import annotations

from dataclasses import dataclass

from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from accounts import auth_failures, selectors, services
from accounts.models import Account, ApiKey, Integration, Scope
from core.api.credentials import INVALID_CREDENTIALS


@dataclass(frozen=True)
class ApiPrincipal:
    """The authenticated caller: an API key with its account and integration."""

    api_key: ApiKey

    is_authenticated = True
    is_active = True

    @property
    def account(self) -> Account:
        return self.api_key.account

    @property
    def integration(self) -> Integration:
        return self.api_key.integration

    def __str__(self) -> str:
        return f"{self.account.identifier}/{self.integration.identifier}"


def presented_key(request: Request) -> str | None:
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if header[:7].lower() == "bearer ":
        return header[7:].strip()
    return request.query_params.get("apikey")


class ApiKeyAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[ApiPrincipal, ApiKey] | None:
        raw_key = presented_key(request)
        if raw_key is None:
            return None
        subjects = auth_failures.subjects(request, raw_key=raw_key)
        api_key = selectors.api_key_for_credentials(
            account_identifier=request.query_params.get("account", ""),
            integration_identifier=request.query_params.get("integration", ""),
            raw_key=raw_key,
            # The address's lock refuses the right key too; the prefix's only failures (accounts.auth_failures).
            unless_locked=auth_failures.refusing_right_keys(subjects),
        )
        if api_key is None:
            wait = auth_failures.record_failure(subjects)
            if wait:
                raise auth_failures.TooManyAuthenticationFailures(wait)
            raise exceptions.AuthenticationFailed(INVALID_CREDENTIALS)
        services.record_api_key_use(api_key=api_key)
        return ApiPrincipal(api_key), api_key

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


class _HasScope(BasePermission):
    scope: str = ""

    def has_permission(self, request: Request, view: object) -> bool:
        principal = request.user
        if not isinstance(principal, ApiPrincipal):
            raise exceptions.NotAuthenticated(INVALID_CREDENTIALS)
        if not principal.api_key.has_scope(self.scope):
            raise exceptions.PermissionDenied(f"This API key lacks the '{self.scope}' scope.")
        return True


class HasAdminScope(_HasScope):
    scope = Scope.ADMIN


class HasImportsScope(_HasScope):
    scope = Scope.IMPORTS


class HasPosScope(_HasScope):
    scope = Scope.POS
