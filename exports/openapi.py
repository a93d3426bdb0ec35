"""The identity exports in the OpenAPI document (``/api/schema/``): each entity type's element declared in
``exports.bodies`` published as a component, ``Export<Entity>Element``, with its wrapper, ``Export<Entity>``.

Each entity type is also an OpenAPI 3.1 webhook named by its code (``webhooks.sales``): the ``POST`` a web hook
delivery makes, its body the wrapper's component, its headers the Standard Webhooks ones. Each export queue's
delivery says where (and whether over HTTP) the wrappers are sent.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.plumbing import ResolvedComponent

from core.nodes import Components, Schema
from exports import bodies
from exports.deliveries.webhook import RETRYABLE_STATUS
from exports.entities import REGISTRY
from exports.retry import MAX_ATTEMPTS


def camel(code: str) -> str:
    return "".join(part.capitalize() for part in code.split("_"))


def wrapper_name(code: str) -> str:
    return f"Export{camel(code)}"


def element_name(code: str) -> str:
    return f"Export{camel(code)}Element"


class ExportComponents(Components):
    """The components of the exports: a part declared in ``exports.bodies`` under its own name, a part that is a
    request body's declaration under the request's component name (``<name>Request``, the same schema): the
    document's other components of the plain names are answers' serializers."""

    def ref(self, name: str, owner: object, build: Any) -> Schema:
        self.suffix = "" if getattr(owner, "__module__", "") == bodies.__name__ else "Request"
        return super().ref(name, owner, build)


def export_components(element_key: dict[str, str]) -> ExportComponents:
    """The components of every entity type's wrapper and element (and what they refer to), by name;
    ``element_key`` says each type's key (``EntityDefinition.element_key``)."""
    components = ExportComponents()
    for code, body in bodies.ELEMENTS.items():
        element = body.json_schema(components)
        name = wrapper_name(code)
        components.owners[name] = bodies.ELEMENTS[code]
        components.schemas[name] = {
            "type": "object",
            "description": (
                f"What an identity export of `{code}` sends: element key (`{element_key[code]}`) to element. "
                "Real time: one element; cron: one or more."
            ),
            "additionalProperties": element,
            "minProperties": 1,
        }
    return components


def element_keys() -> dict[str, str]:
    return {code: entity.element_key for code, entity in REGISTRY.items()}


SIGNATURE_HEADERS = (
    ("webhook-id", True, "The delivery's id: the same on every retry of it, so a receiver drops a repeat."),
    ("webhook-timestamp", True, "When this attempt was sent, Unix seconds."),
    (
        "webhook-signature",
        False,
        "`v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` with the queue's secret "
        "(the bytes after `whsec_`, base64-decoded); sent when the delivery has a secret "
        "(docs/receiving-webhooks.md).",
    ),
)


def webhook(code: str) -> dict[str, Any]:
    """The path item of the identity export of ``code`` sent by a web hook delivery (OpenAPI 3.1 ``webhooks``)."""
    retryable = ", ".join(str(status) for status in sorted(RETRYABLE_STATUS))
    return {
        "post": {
            "operationId": f"export_{code}",
            "summary": f"Identity export of `{code}`",
            "description": (
                f"What a web hook delivery of an export queue of `{code}` with the identity transform POSTs to the "
                "queue's URL: the wrapper, one element in real time, one or more in a cron export (docs/events.md)."
            ),
            "tags": ["exports"],
            "parameters": [
                {"name": name, "in": "header", "required": required, "description": text, "schema": {"type": "string"}}
                for name, required, text in SIGNATURE_HEADERS
            ],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{wrapper_name(code)}"}}},
            },
            "responses": {
                "2XX": {"description": "Received: the delivery succeeded; the answer's body is not read further."},
                "default": {
                    "description": (
                        f"Not received. In a real-time export, {retryable}, a timeout or a refused connection are "
                        f"retried, the delay doubling, up to {MAX_ATTEMPTS} attempts in all; any other answer, and any "
                        "failure of a cron export, is final (docs/exports-delivery.md)."
                    )
                },
            },
        }
    }


def publish(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: the export components registered with the document's (the enum hook
    after it builds the components again from the registry), and a webhook per entity type referring to its
    wrapper. A name the document has already must be the same schema (a request body's part), or the refs would
    be wrong."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    components = export_components(element_keys())
    for name, schema in components.schemas.items():
        if schemas.setdefault(name, schema) != schema:
            raise ValueError(f"the export component {name!r} is named like another component of the document")
        generator.registry.register_on_missing(
            ResolvedComponent(name=name, type=ResolvedComponent.SCHEMA, object=components.owners[name], schema=schema)
        )
    result.setdefault("webhooks", {}).update({str(code): webhook(code) for code in bodies.ELEMENTS})
    return result
