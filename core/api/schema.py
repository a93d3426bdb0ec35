"""The OpenAPI building blocks of the apps' API modules (drf-spectacular): the error body and its examples,
the credentials' query parameters, examples, filter parameters, and the whole schema of a view set that reads
(:func:`read_operations`; ``core.api.Area`` for a read-only one) or lists, creates, reads, replaces, changes and deletes
(:func:`crud_schema`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import serializers

from core.api.credentials import INVALID_CREDENTIALS
from core.api.pagination import MAX_OFFSET


class ErrorItemSerializer(serializers.Serializer):
    field = serializers.CharField(help_text='The offending input, e.g. "currency" or "default_taxes".')
    message = serializers.CharField(help_text="What is wrong with it, for a person.")
    code = serializers.CharField(required=False, help_text="Present on errors raised by the services.")


class ErrorOutputSerializer(serializers.Serializer):
    """The JSON body of every refused request (``core.errors.error_body``)."""

    status = serializers.CharField(help_text="Always ERROR.")
    message = serializers.CharField(help_text="What went wrong, for a person.")
    # A declared field shadows Serializer.errors only in the type stubs: DRF pops fields off the class.
    errors = ErrorItemSerializer(  # type: ignore[assignment]
        many=True, required=False, help_text="One entry per fault, each naming its field (absent: no one field)."
    )

    class Meta:
        ref_name = "Error"


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

# An error answer's example: its summary (the name the document shows) and the body.
Example = tuple[str, dict[str, Any]]

# The examples of the answers every endpoint of a kind gives alike. What makes a body invalid (400) or a change
# refused (409) is each endpoint's own: those have an example only where the endpoint declares its own.
_ERROR_EXAMPLES: dict[int, Example] = {
    401: ("Invalid credentials", {"status": "ERROR", "message": INVALID_CREDENTIALS}),
    404: ("Not found", {"status": "ERROR", "message": "Not found."}),
    429: (
        "Too many requests",
        {
            "status": "ERROR",
            "message": "Too many previews, test sends and test calls: try again after the delay in the Retry-After "
            "header.",
        },
    ),
}


def missing_scope(scope: str) -> Example:
    """The 403 of a key without the ``scope`` the endpoint requires."""
    return "Missing scope", {"status": "ERROR", "message": f"This API key lacks the '{scope}' scope."}


def invalid(summary: str, *errors: tuple[str, str, str | None]) -> Example:
    """A 400's example: the body of a request refused for ``errors``, each ``(field, message, code)`` (the code
    ``None`` where the answer has none: a field the request serializer refuses)."""
    return summary, {
        "status": "ERROR",
        "message": "The request is invalid.",
        "errors": [
            {"field": name, "message": message, **({"code": code} if code else {})} for name, message, code in errors
        ],
    }


# The 400 of every list: a page parameter out of range (``core.api.pagination``).
_PAGE = f"'limit' must be a whole number from 1 to {MAX_OFFSET}"
INVALID_PAGE: Example = (
    "Invalid page",
    {"status": "ERROR", "message": _PAGE, "errors": [{"field": "limit", "message": _PAGE, "code": "invalid"}]},
)

# The description of an error status without an example: the body is the error body (``Error``), as every refusal's.
_REFUSED = {
    400: "Invalid input: the error body names each invalid field.",
    409: "Refused by the object's state: the error body says why.",
}


def error_responses(
    *codes: int, scope: str = "admin", examples: Mapping[int, Example] | None = None
) -> dict[int, OpenApiResponse]:
    """OpenAPI responses for these error statuses plus 401 and 403, which every endpoint can answer: the 403 names
    the ``scope`` the endpoint requires; ``examples`` gives the endpoint's own answer of a status. A 400 and a 409
    have an example only there (without one, the status is described with the error body of every refusal);
    a 401, 404 and 429 otherwise have the one every endpoint gives alike."""
    responses = {}
    given = {403: missing_scope(scope), **(examples or {})}
    for code in sorted({401, 403, *codes}):
        found = given.get(code) or _ERROR_EXAMPLES.get(code)
        if found is None:  # the error body every refusal has; no example, since each example is a real answer
            responses[code] = OpenApiResponse(ErrorOutputSerializer, description=_REFUSED.get(code, "Refused"))
            continue
        summary, value = found
        responses[code] = OpenApiResponse(
            ErrorOutputSerializer,
            description=summary,
            examples=[OpenApiExample(summary, value=value, status_codes=[code], response_only=True)],
        )
    return responses


def response_example(name: str, value: dict[str, Any], *, status_code: int = 200) -> OpenApiExample:
    return OpenApiExample(name, value=value, status_codes=[status_code], response_only=True)


def refusal(summary: str, message: str, *, field: str | None = None, code: str = "invalid") -> Example:
    """An example for ``error_responses(examples=...)``: the body a ``core.errors.ServiceError`` answers (an error
    naming the ``field`` where it has one)."""
    body: dict[str, Any] = {"status": "ERROR", "message": message}
    if field is not None:
        body["errors"] = [{"field": field, "message": message, "code": code}]
    return summary, body


def conflict(summary: str, message: str, *, field: str | None = None, code: str = "conflict") -> Example:
    """A 409's example for ``error_responses(examples={409: ...})``: the body ``core.errors.Conflict`` answers
    (an error naming the ``field`` where it has one)."""
    return refusal(summary, message, field=field, code=code)


def error_example(
    name: str, message: str, *, status_code: int, field: str | None = None, code: str = "invalid"
) -> OpenApiExample:
    """An error answer's example: its ``message`` and, when it is about one ``field``, the error naming it (its
    ``code``)."""
    value: dict[str, Any] = {"status": "ERROR", "message": message}
    if field is not None:
        value["errors"] = [{"field": field, "message": message, "code": code}]
    return response_example(name, value, status_code=status_code)


def request_example(name: str, value: dict[str, Any]) -> OpenApiExample:
    return OpenApiExample(name, value=value, request_only=True)


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
    plural = f"{noun[:-1]}ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else f"{noun}s"
    common: dict[str, Any] = {"examples": [response_example(example_name or noun, example)]}
    if tags:
        common["tags"] = list(tags)
    listing: dict[str, Any] = {
        "summary": f"List {plural}",
        "parameters": [*AUTH_PARAMETERS, *filters],
        "responses": {200: output_serializer(many=True), **error_responses(400, examples={400: INVALID_PAGE})},
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


def filter_parameter(name: str, description: str, *, enum: list[str] | None = None) -> OpenApiParameter:
    return OpenApiParameter(name, OpenApiTypes.STR, OpenApiParameter.QUERY, description=description, enum=enum)


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
    errors: Mapping[str, Mapping[int, Example]] | None = None,
) -> Any:
    """``extend_schema_view`` of a view set with the six operations above: one tag, examples for every response
    shape (``example`` as the view answers it, ``request`` as a client sends it), a description per operation
    (``descriptions``), ``filters`` on the list; ``delete_conflict``: a delete may answer 409 (in use);
    ``errors``: the operations' own error examples, by operation and status (``error_responses``'s
    ``examples``; a list's 400 is the page's)."""
    article = article or ("an" if noun[0] in "aeiou" else "a")
    one = [response_example(noun, example), response_example(noun, example, status_code=201)]
    body = [request_example(noun, request)]
    operations: dict[str, Any] = {}
    for operation, (summary, success, has_body, statuses) in _CRUD_OPERATIONS.items():
        schema: dict[str, Any] = {
            "tags": [tag],
            "summary": summary.format(noun=noun, article=article),
            "parameters": [*AUTH_PARAMETERS, *filters] if operation == "list" else AUTH_PARAMETERS,
        }
        if operation in descriptions:
            schema["description"] = descriptions[operation]
        if has_body:
            schema["request"] = input_serializer
        own = {**({400: INVALID_PAGE} if operation == "list" else {}), **(errors or {}).get(operation, {})}
        if operation == "destroy":
            codes = (*statuses, *((409,) if delete_conflict else ()))
            schema["responses"] = {204: None, **error_responses(*codes, examples=own)}
        else:
            answer = output_serializer(many=True) if operation == "list" else output_serializer
            schema["responses"] = {success: answer, **error_responses(*statuses, examples=own)}
            schema["examples"] = (
                [response_example(noun, example)] if operation == "list" else [*body, *one] if has_body else one
            )
        operations[operation] = extend_schema(**schema)
    return extend_schema_view(**operations)


def any_value_takes_null(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: in OpenAPI 3.1 drf-spectacular writes a nullable field of any value
    (a ``JSONField`` with ``allow_null``) as ``oneOf: [{}, {"type": "null"}]``, which refuses null (it matches
    both branches). Any value takes null already: such a ``oneOf`` is left out, its siblings kept."""

    def fixed(node: Any) -> Any:
        if isinstance(node, list):
            return [fixed(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: fixed(value) for key, value in node.items()}
        if out.get("oneOf") == [{}, {"type": "null"}]:
            del out["oneOf"]
        return out

    fixed_result: dict[str, Any] = fixed(result)
    return fixed_result
