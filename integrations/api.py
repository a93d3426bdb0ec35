"""Back-office REST API (``/api/v1/``): runtime integrations (CRUD, "test this integration") and their call
log (spec: Endpoints B, Runtime integrations). Admin scope; another account's row is a 404.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from accounts.scoping import ReadOnlyViewSet, ReadsViewSet
from accounts.tryouts import TryOutThrottle
from core import api as toolkit
from core.api import reads
from core.secrets import MASK
from integrations import selectors, services
from integrations.kinds import KINDS
from integrations.models import RuntimeIntegration
from integrations.serializers import (
    IntegrationCallFilterSerializer,
    IntegrationCallOutputSerializer,
    RuntimeIntegrationInputSerializer,
    RuntimeIntegrationOutputSerializer,
    TestInputSerializer,
    TestOutputSerializer,
)

_AT = "2025-01-15T09:30:00Z"
REQUEST_EXAMPLE: dict[str, Any] = {
    "kind": "giftcard_pay",
    "enabled": True,
    "method": "POST",
    "url": "https://erp.example.com/giftcards/{code}/pay",
    "query": {},
    "headers": {"Authorization": "Bearer s3cr3t-t0ken"},
    "body": {"amount": "{amount}", "currency": "{currency_code}", "reference": "sale {sale_id}", "pin": "4711"},
    "secret_fields": ["body.pin"],
    "timeout": "5.0",
    "transform": "",
}
EXAMPLE: dict[str, Any] = {
    "id": 7,
    **REQUEST_EXAMPLE,
    "headers": {"Authorization": MASK},
    "body": {**REQUEST_EXAMPLE["body"], "pin": MASK},
    "placeholders": list(KINDS["giftcard_pay"]),
    "created_at": _AT,
    "updated_at": _AT,
}
TEST_EXAMPLE = {
    "ok": False,
    "status_code": 200,
    "duration_ms": 84,
    "data": {"amount": 99, "code": "TEST-CARD", "status": 2},
    "problems": [{"field": "create_date", "message": "is required"}],
}
CALL_EXAMPLE = {
    "id": 311,
    "integration": 7,
    "kind": "giftcard_pay",
    "ok": False,
    "status_code": 503,
    "duration_ms": 41,
    "error": "the integrator answered HTTP 503",
    "created_at": _AT,
}

_SECRETS = (
    f"Secrets read as `{MASK}`: header values (but Accept, Accept-Encoding, Accept-Language, Content-Type, "
    "User-Agent), the URL's own query values (but placeholder-only ones) and the places declared in "
    "`secret_fields` (`query.<name>`, `body.<key>.<key>`, `url.path`). Without `secret_fields`, names that look "
    f"secret are suggested (kept on update). `{MASK}` sent back keeps the stored value while its place stays "
    "secret and the URL's scheme, host and port stay the same; otherwise it is refused: give the value."
)


def _write(summary: str, created: bool = False) -> Any:
    return extend_schema(
        summary=summary,
        description=_SECRETS,
        parameters=toolkit.AUTH_PARAMETERS,
        request=RuntimeIntegrationInputSerializer,
        responses={
            201 if created else 200: RuntimeIntegrationOutputSerializer,
            **toolkit.error_responses(400, *(() if created else (404,))),
        },
        examples=[
            toolkit.request_example("Gift card pay", REQUEST_EXAMPLE),
            toolkit.response_example("Runtime integration", EXAMPLE, status_code=201 if created else 200),
        ],
    )


@extend_schema_view(
    list=extend_schema(
        summary="List runtime integrations",
        parameters=toolkit.AUTH_PARAMETERS,
        responses={
            200: RuntimeIntegrationOutputSerializer(many=True),
            **toolkit.error_responses(400, examples={400: toolkit.INVALID_PAGE}),
        },
        examples=[toolkit.response_example("Runtime integration", EXAMPLE)],
    ),
    retrieve=extend_schema(
        summary="Get a runtime integration",
        parameters=toolkit.AUTH_PARAMETERS,
        responses={200: RuntimeIntegrationOutputSerializer, **toolkit.error_responses(404)},
        examples=[toolkit.response_example("Runtime integration", EXAMPLE)],
    ),
    create=_write("Create a runtime integration", created=True),
    update=_write("Replace a runtime integration"),
    partial_update=_write("Change fields of a runtime integration"),
    destroy=extend_schema(
        summary="Delete a runtime integration",
        description="Its call log stays.",
        parameters=toolkit.AUTH_PARAMETERS,
        responses={204: None, **toolkit.error_responses(404)},
    ),
    test=extend_schema(
        summary="Test a runtime integration",
        description=(
            "Calls the integrator (even when the integration is disabled) with sample `values` (the kind's "
            "defaults fill in the rest) and reports, field by field, where the answer does not match the kind's "
            "spec model. A failed call answers 200 with `ok` false and the reason in `problems`."
        ),
        parameters=toolkit.AUTH_PARAMETERS,
        request=TestInputSerializer,
        responses={200: TestOutputSerializer, **toolkit.error_responses(400, 404, 429)},
        examples=[
            toolkit.request_example("A known card", {"values": {"code": "GC-1001"}}),
            toolkit.response_example("Answer with a problem", TEST_EXAMPLE),
        ],
    ),
)
@reads(selectors.runtime_integrations, output=RuntimeIntegrationOutputSerializer)
class RuntimeIntegrationViewSet(ReadsViewSet, toolkit.WritesViewSet):
    """Runtime integrations, by id: one per kind, how the service calls the integrator's endpoint."""

    def create(self, request: Request) -> Response:
        data = self.validated(RuntimeIntegrationInputSerializer, request.data)
        integration = services.save_runtime_integration(account=self.account, data=data)
        return Response(RuntimeIntegrationOutputSerializer(integration).data, status=status.HTTP_201_CREATED)

    def update(self, request: Request, pk: str, partial: bool = False) -> Response:
        integration = self.get_object()
        data = self.validated(RuntimeIntegrationInputSerializer, request.data, partial=partial)
        integration = services.save_runtime_integration(account=self.account, integration=integration, data=data)
        return Response(RuntimeIntegrationOutputSerializer(integration).data)

    def perform_destroy(self, instance: RuntimeIntegration) -> None:
        services.delete_runtime_integration(account=self.account, integration=instance)

    @action(detail=True, methods=["post"], throttle_classes=[TryOutThrottle])
    def test(self, request: Request, pk: str) -> Response:
        integration = self.get_object()
        data = self.validated(TestInputSerializer, request.data or {})
        result = services.test_runtime_integration(
            account=self.account, integration=integration, values=data.get("values") or {}
        )
        return Response(TestOutputSerializer(result).data)


CALLS = toolkit.Area(
    "runtime integration calls",
    filters={"kind": "Only calls of this kind.", "ok": "Only successful (true) or failed (false) calls."},
)


@CALLS.reads(
    selectors.integration_calls,
    IntegrationCallOutputSerializer,
    IntegrationCallFilterSerializer,
    CALL_EXAMPLE,
    noun="runtime integration call",
)
class IntegrationCallViewSet(ReadOnlyViewSet):
    """The call log of the runtime integrations: every call to an integrator, newest first: kind, status,
    duration and error (no secrets)."""


def register(router: SimpleRouter) -> None:
    """Routes of this app under /api/v1/."""
    router.register("runtime-integrations", RuntimeIntegrationViewSet, basename="runtime-integration")
    router.register("runtime-integration-calls", IntegrationCallViewSet, basename="runtime-integration-call")
