"""Back-office REST API (``/api/v1/``): export queues (configuration, preview, bulk retry) and the export log.

Queues are addressed by id. Writes go through ``exports.services`` (``create_queue`` / ``update_queue`` /
``retry_items``), which refuse a configuration that cannot work with the offending field named. Secrets of
a delivery are masked on the way out (``exports.serializers.mask``) and a masked value sent back keeps the
stored one (``unmask``); a generated web hook secret is answered once, in ``generated_secret``.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from accounts.scoping import ReadOnlyViewSet, ReadsViewSet
from accounts.tryouts import TryOutThrottle
from core.api import (
    AUTH_PARAMETERS,
    Area,
    ErrorOutputSerializer,
    WritesViewSet,
    conflict,
    error_example,
    error_responses,
    read_operations,
    reads,
    refusal,
    request_example,
    response_example,
)
from exports import circuit, outputs, selectors, services
from exports.models import ExportQueue
from exports.serializers import (
    MASK,
    ConfigPreviewInputSerializer,
    ExportLogFilterSerializer,
    ExportLogOutputSerializer,
    ExportQueueInputSerializer,
    ExportQueueOutputSerializer,
    ExportQueueSavedOutputSerializer,
    OutputSchemaOutputSerializer,
    PreviewInputSerializer,
    PreviewOutputSerializer,
    QueueRetryInputSerializer,
    RetriedOutputSerializer,
    unmask,
)

# A bulk retry hands at most this many items to new deliveries per call; call again for the rest.
MAX_BULK_RETRY = 1000

_AT = "2025-01-15T09:30:00Z"
QUEUE_REQUEST_EXAMPLE: dict[str, Any] = {
    "name": "Orders to the ERP",
    "entity_type": "incoming_order_state_changes",
    "enabled": True,
    "filters": {"stock_locations": ["shop-1"], "markets": [], "ignore_stock_event_types": []},
    "trigger": "realtime",
    "daily_at": None,
    "concurrency": None,
    "transform": {"type": "identity"},
    "delivery": {"type": "webhook", "url": "https://erp.example.com/hooks/orders", "headers": {"X-Shop": "acme"}},
}
QUEUE_EXAMPLE: dict[str, Any] = {
    "id": 7,
    **QUEUE_REQUEST_EXAMPLE,
    "delivery": {**QUEUE_REQUEST_EXAMPLE["delivery"], "secret": MASK},
    "failing_since": None,
    "disabled_at": None,
    "disabled_reason": "",
    "created_at": _AT,
    "updated_at": _AT,
}
QUEUE_SAVED_EXAMPLE: dict[str, Any] = {
    **QUEUE_EXAMPLE,
    "generated_secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw7rB3bZ1Wc8I=",
}
PREVIEW_EXAMPLE = {
    "element_key": "WEB-10001:311",
    "content_type": "application/json",
    "extension": "json",
    "content": '{"WEB-10001:311":{"order":{"order_identifier":"WEB-10001"},"state":{"order_state":"created"}}}',
}
EXPORT_LOG_EXAMPLE: dict[str, Any] = {
    "id": 5120,
    "queue": 7,
    "queue_name": "Orders to the ERP",
    "entity_type": "incoming_order_state_changes",
    "element_key": "WEB-10001:311",
    "status": "failure",
    "message": "HTTP 500: internal error",
    "attempts": 1,
    "status_code": 500,
    "error": "HTTP 500: internal error",
    "duration_ms": 84,
    "delivery_id": "msg_5f0c6e2a8d7b4a519b0e2c1f7f1d9a34",
    "created_at": _AT,
    "finished_at": "2025-01-15T09:30:01Z",
    "paused_until": None,
    "pause_reason": "",
    "attempt_log": [
        {
            "number": 1,
            "ok": False,
            "status_code": 500,
            "error": "HTTP 500: internal error",
            "duration_ms": 84,
            "started_at": "2025-01-15T09:30:01Z",
            "sent": "POST https://erp.example.com/********, 1,234 bytes application/json; headers X-Shop: ********; "
            "signed",
            "answer": "internal error",
        }
    ],
}
# A simple JSON queue of sales with ``OUTPUT_SCHEMA_EXAMPLE_TRANSFORM``, and its output schema.
OUTPUT_SCHEMA_EXAMPLE_TRANSFORM = {
    "type": "simple_json",
    "fields": {"sale": "{identifier}", "amount": "{summary.total|money}"},
}
OUTPUT_SCHEMA_EXAMPLE: dict[str, Any] = {
    "entity_type": "sales",
    "transform": "simple_json",
    "content_type": "application/json",
    "extension": "json",
    "json_schema": {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "simple_json export of sales",
        "type": "object",
        "description": "Element key to flat object: one element in a real-time export, one or more in a cron one.",
        "additionalProperties": {
            "type": "object",
            "description": "One sales element as this queue's fields make it.",
            "properties": {
                "sale": {
                    "anyOf": [{"type": "string", "maxLength": 255, "minLength": 1, "pattern": "\\S"}, {"type": "null"}],
                    "description": "From `{identifier}`: The sale's identifier, unique in the account.",
                },
                "amount": {
                    "anyOf": [{"type": "string", "pattern": "^-?[0-9]+(\\.[0-9]+)?$"}, {"type": "null"}],
                    "description": "From `{summary.total|money}`: quantized to the currency's minor unit.",
                },
            },
            "required": ["sale", "amount"],
            "additionalProperties": False,
        },
    },
    "csv": None,
}
_NOTHING_TO_PREVIEW = refusal("Nothing to preview", "no stored entity of this type to preview", field="object_id")
_STILL_PENDING = error_example(
    "Still pending",
    "a pending item can be retried once it has an outcome",
    field="status",
    code="pending",
    status_code=409,
)
# At the default EXPORT_QUEUES_PER_ACCOUNT.
_QUEUE_LIMIT = conflict(
    "Queue limit reached",
    "This account has 100 export queues, the most it may have: delete one before adding another.",
    field="name",
    code="limit_reached",
)
_INVALID_CONFIG = refusal("Invalid configuration", "must be an absolute https URL", field="delivery.url")


def _queue_write_schema(summary: str, *, description: str = "", created: bool = False) -> Any:
    code = 201 if created else 200
    return extend_schema(
        summary=summary,
        description=description,
        parameters=AUTH_PARAMETERS,
        request=ExportQueueInputSerializer,
        responses={
            code: ExportQueueSavedOutputSerializer,
            **error_responses(
                400, *((409,) if created else (404,)), examples={400: _INVALID_CONFIG, 409: _QUEUE_LIMIT}
            ),
        },
        examples=[
            request_example("Web hook queue", QUEUE_REQUEST_EXAMPLE),
            response_example("Saved queue", QUEUE_SAVED_EXAMPLE, status_code=code),
        ],
    )


@extend_schema_view(
    **read_operations(
        noun="export queue",
        output_serializer=ExportQueueOutputSerializer,
        example=QUEUE_EXAMPLE,
        example_name="Export queue",
    ),
    create=_queue_write_schema(
        "Create an export queue",
        description=(
            "A web hook without a `secret` gets a generated one, answered this once in `generated_secret`. "
            f"Secrets are never shown back: they read as `{MASK}`."
        ),
        created=True,
    ),
    update=_queue_write_schema(
        "Replace an export queue",
        description=(
            "Optional fields left out are reset to their defaults. A secret sent back as "
            f'`{MASK}` (or a web hook `secret` left out) keeps the stored one; `"secret": null` generates a new one.'
        ),
    ),
    partial_update=_queue_write_schema(
        "Change fields of an export queue",
        description=f"A secret sent back as `{MASK}` keeps the stored one.",
    ),
    destroy=extend_schema(
        summary="Delete an export queue",
        description="Its export log and deliveries go with it.",
        parameters=AUTH_PARAMETERS,
        responses={204: None, **error_responses(404)},
    ),
    preview_unsaved=extend_schema(
        operation_id="api_v1_export_queues_preview_unsaved",
        summary="Preview a transform before saving a queue",
        description=(
            "Renders a transform configuration, validated as on save, on a stored entity of `entity_type` "
            "(the newest, or `object_id`); nothing is saved or delivered."
        ),
        parameters=AUTH_PARAMETERS,
        request=ConfigPreviewInputSerializer,
        responses={200: PreviewOutputSerializer, **error_responses(400, 429)},
        examples=[
            request_example(
                "A CSV of order states",
                {
                    "entity_type": "incoming_order_state_changes",
                    "transform": {"type": "csv", "columns": [{"header": "Order", "path": "order.order_identifier"}]},
                },
            ),
            response_example("Rendered", PREVIEW_EXAMPLE),
        ],
    ),
    preview=extend_schema(
        summary="Preview an export queue's transform",
        description=(
            "Renders the queue's transform on a stored entity of its type (the newest, or `object_id`) "
            "without delivering anything."
        ),
        parameters=AUTH_PARAMETERS,
        request=PreviewInputSerializer,
        responses={
            200: PreviewOutputSerializer,
            **error_responses(400, 404, 429, examples={400: _NOTHING_TO_PREVIEW}),
        },
        examples=[
            request_example("The newest entity", {}),
            response_example("Rendered", PREVIEW_EXAMPLE),
        ],
    ),
    output_schema=extend_schema(
        summary="What an export queue sends, described by its transform",
        description=(
            "The output of the queue's transform as its configuration fixes it: for `identity` the entity type's "
            "`Export<Entity>` wrapper and for `simple_json` the schema derived from its `fields`, each as a "
            "self-contained JSON Schema (draft 2020-12) in `json_schema`; for `csv` the layout in `csv` (the "
            "columns in order, each one's source and cell type, the separator, quoting, header and line "
            "terminator). A template's (`mustache`, `handlebars`) output is what it writes: only its "
            "`content_type` and `extension`. docs/events.md says more."
        ),
        parameters=AUTH_PARAMETERS,
        responses={200: OutputSchemaOutputSerializer, **error_responses(400, 404)},
        examples=[response_example("A simple JSON queue", OUTPUT_SCHEMA_EXAMPLE)],
    ),
    enable=extend_schema(
        summary="Enable an export queue again",
        description=(
            "Turns the queue on again, typically after the service disabled it (`disabled_reason`: its destination "
            "failed for EXPORT_QUEUE_DISABLE_AFTER_DAYS): clears the reason and closes the destination's circuit "
            "breaker, so the next delivery is sent at once. Items failed by the disable are not sent again by "
            "this; `POST .../retry` does that. A `PATCH` with `enabled: true` does the same."
        ),
        parameters=AUTH_PARAMETERS,
        request=None,
        responses={200: ExportQueueOutputSerializer, **error_responses(404)},
        examples=[response_example("Enabled queue", QUEUE_EXAMPLE)],
    ),
    retry=extend_schema(
        summary="Retry an export queue's failed items",
        description=(
            "Hands the queue's failed items (or the items named in `ids`, of any final outcome: a replay) to "
            f"new deliveries with new delivery ids. At most {MAX_BULK_RETRY} items per call; pending items "
            "are left alone."
        ),
        parameters=AUTH_PARAMETERS,
        request=QueueRetryInputSerializer,
        responses={200: RetriedOutputSerializer, **error_responses(400, 404)},
        examples=[
            request_example("Failed items", {"status": "failure"}),
            request_example("Replay these", {"ids": [5120, 5121]}),
            response_example("Retried", {"retried": 2}),
        ],
    ),
)
@extend_schema(tags=["export queues"])
@reads(selectors.export_queues, output=ExportQueueOutputSerializer)
class ExportQueueViewSet(ReadsViewSet, WritesViewSet):
    """Export queues, by id: which entities go where (trigger, transform, delivery)."""

    def perform_destroy(self, instance: ExportQueue) -> None:
        services.delete_queue(account=self.account, queue=instance)

    def create(self, request: Request) -> Response:
        data = self.validated(ExportQueueInputSerializer, request.data)
        data["delivery"] = unmask(data["delivery"], None)
        queue, secret = services.create_queue(account=self.account, **data)
        body = ExportQueueSavedOutputSerializer(queue, context={"generated_secret": secret}).data
        return Response(body, status=status.HTTP_201_CREATED)

    def update(self, request: Request, pk: str, partial: bool = False) -> Response:
        queue = self.get_object()
        data = self.validated(ExportQueueInputSerializer, request.data, partial=partial)
        if "delivery" in data:
            data["delivery"] = unmask(data["delivery"], queue.delivery)
        queue, secret = services.update_queue(account=self.account, queue=queue, **data)
        return Response(ExportQueueSavedOutputSerializer(queue, context={"generated_secret": secret}).data)

    @action(detail=True, methods=["post"], throttle_classes=[TryOutThrottle])
    def preview(self, request: Request, pk: str) -> Response:
        queue = self.get_object()
        data = self.validated(PreviewInputSerializer, request.data or {})
        rendered, element_key = services.preview(queue=queue, object_id=data.get("object_id"))
        return Response(_preview_body(rendered, element_key))

    @action(detail=False, methods=["post"], url_path="preview", throttle_classes=[TryOutThrottle])
    def preview_unsaved(self, request: Request) -> Response:
        data = self.validated(ConfigPreviewInputSerializer, request.data or {})
        rendered, element_key = services.preview_config(
            account=self.account,
            entity_type=data["entity_type"],
            transform=data["transform"],
            object_id=data.get("object_id"),
        )
        return Response(_preview_body(rendered, element_key))

    @action(detail=True, methods=["get"], url_path="output-schema")
    def output_schema(self, request: Request, pk: str) -> Response:
        queue = self.get_object()
        described = outputs.describe(entity_type=queue.entity_type, transform=queue.transform)
        return Response(OutputSchemaOutputSerializer(described).data)

    @action(detail=True, methods=["post"])
    def enable(self, request: Request, pk: str) -> Response:
        queue = circuit.enable_queue(account=self.account, queue=self.get_object())
        return Response(ExportQueueOutputSerializer(queue).data)

    @action(detail=True, methods=["post"])
    def retry(self, request: Request, pk: str) -> Response:
        queue = self.get_object()
        data = self.validated(QueueRetryInputSerializer, request.data or {})
        items = selectors.retryable_items(account=self.account, queue=queue, ids=data.get("ids"), limit=MAX_BULK_RETRY)
        retried = services.retry_items(account=self.account, items=items) if items else 0
        return Response({"retried": retried})


def _preview_body(rendered: Any, element_key: str) -> dict[str, Any]:
    body = {
        "element_key": element_key,
        "content_type": rendered.content_type,
        "extension": rendered.extension,
        "content": rendered.content.decode("utf-8", errors="replace"),
    }
    return dict(PreviewOutputSerializer(body).data)


EXPORT_LOG = Area(
    "export log",
    filters={
        "queue": "Only the items of this export queue (its id).",
        "status": "Only items with this outcome.",
        "entity_type": "Only items of this entity type.",
        "element_key": "Only items with this element key, e.g. WEB-10001:311.",
    },
)


@extend_schema_view(
    retry=extend_schema(
        summary="Retry an export log entry",
        description=(
            "Re-sends a failed item, or replays a delivered one, in a new delivery with a new delivery id. "
            "A pending item is refused (409)."
        ),
        parameters=AUTH_PARAMETERS,
        request=None,
        responses={
            200: RetriedOutputSerializer,
            **error_responses(404),
            409: OpenApiResponse(ErrorOutputSerializer, description="Still pending", examples=[_STILL_PENDING]),
        },
        examples=[response_example("Retried", {"retried": 1})],
    ),
)
@EXPORT_LOG.reads(
    partial(selectors.export_items, with_attempts=True),
    ExportLogOutputSerializer,
    ExportLogFilterSerializer,
    EXPORT_LOG_EXAMPLE,
)
class ExportLogViewSet(ReadOnlyViewSet):
    """Every export item, one per entity per queue, newest first, with the outcome of its delivery and the attempt
    log of that delivery."""

    @action(detail=True, methods=["post"])
    def retry(self, request: Request, pk: str) -> Response:
        retried = services.retry_items(account=self.account, items=[self.get_object()])
        return Response({"retried": retried})


def register(router: SimpleRouter) -> None:
    """Routes of this app under /api/v1/."""
    router.register("export-queues", ExportQueueViewSet, basename="export-queue")
    router.register("export-logs", ExportLogViewSet, basename="export-log")
