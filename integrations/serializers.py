"""Serializers of the back-office REST API for runtime integrations and their call log.

Secrets are never shown back (``core.secrets``): header values (except the few public headers such as
``Accept``), the URL's own query values and the places declared in ``secret_fields`` read as ``MASK``; ``MASK``
sent back keeps the stored value (``services.unmasked``).
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core.serializers import JSONField
from integrations.kinds import KINDS
from integrations.models import DEFAULT_TIMEOUT, MAX_TIMEOUT, MIN_TIMEOUT, IntegrationCall, Method, RuntimeIntegration
from integrations.services import MAX_SECRET_FIELDS, masked

_PLACEHOLDER_HELP = "; ".join(f"{kind}: " + ", ".join("{" + p + "}" for p in names) for kind, names in KINDS.items())


class RuntimeIntegrationInputSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=list(KINDS), help_text=f"Placeholders per kind: {_PLACEHOLDER_HELP}")
    enabled = serializers.BooleanField(
        default=True, help_text="False: the POS endpoints of the kind answer 404 (not configured). Default true."
    )
    method = serializers.ChoiceField(
        choices=Method.values, default=Method.GET, help_text="The HTTP method of the call: GET (the default) or POST."
    )
    url = serializers.CharField(max_length=2000, help_text="URL template, e.g. https://erp.example.com/cards/{code}")
    query = serializers.DictField(
        child=serializers.CharField(allow_blank=True, max_length=2000, trim_whitespace=False),
        default=dict,
        help_text="Query parameters: name -> template.",
    )
    headers = serializers.DictField(
        child=serializers.CharField(allow_blank=True, max_length=4000, trim_whitespace=False),
        default=dict,
        help_text="Headers: name -> value (template). Values read back masked.",
    )
    body = JSONField(
        allow_null=True,
        default=None,
        help_text="JSON body template (POST), or null. A string that is exactly "
        '"{placeholder}" keeps the value\'s JSON type.',
    )
    secret_fields = serializers.ListField(
        child=serializers.CharField(max_length=300),
        required=False,
        max_length=MAX_SECRET_FIELDS,
        help_text='Places whose values are secret: "query.<name>", "body.<key>.<key>" ("[0]" for a list element), '
        '"url.path". Left out: the stored declaration (on create: names that look secret) plus suggestions for '
        "new names.",
    )
    timeout = serializers.DecimalField(
        max_digits=4,
        decimal_places=1,
        min_value=MIN_TIMEOUT,
        max_value=MAX_TIMEOUT,
        default=DEFAULT_TIMEOUT,
        help_text=f"Seconds the whole call may take, {MIN_TIMEOUT} to {MAX_TIMEOUT} (default {DEFAULT_TIMEOUT}).",
    )
    transform = serializers.CharField(
        allow_blank=True, allow_null=True, default="", max_length=4000, help_text="A JMESPath expression, or blank."
    )


_MASKED = " Secret values read as `********`."


class RuntimeIntegrationOutputSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField(
        help_text="URL template, e.g. https://erp.example.com/cards/{code}; a secret path or query value masked."
    )
    query = serializers.SerializerMethodField(help_text="Query parameters: name -> template." + _MASKED)
    headers = serializers.SerializerMethodField(help_text="Headers: name -> value (template)." + _MASKED)
    body = serializers.SerializerMethodField(help_text="JSON body template (POST), or null." + _MASKED)
    placeholders = serializers.SerializerMethodField(help_text="The placeholders this kind's templates may use.")

    class Meta:
        model = RuntimeIntegration
        fields = [
            "id",
            "kind",
            "enabled",
            "method",
            "url",
            "query",
            "headers",
            "body",
            "secret_fields",
            "timeout",
            "transform",
            "placeholders",
            "created_at",
            "updated_at",
        ]
        extra_kwargs = {
            "id": {"help_text": "The configuration's id (its URL: `runtime-integrations/{id}/`)."},
            "kind": {
                "help_text": "What the service asks the integrator (docs/callbacks.md); one per kind and account."
            },
            "enabled": {"help_text": "False: the kind answers 404 `not_configured` at the POS."},
            "method": {"help_text": "The HTTP method of the call."},
            "created_at": {"help_text": "When it was configured (ISO 8601)."},
            "updated_at": {"help_text": "When it last changed (ISO 8601)."},
        }

    def get_url(self, obj: RuntimeIntegration) -> str:
        return masked(obj)["url"]  # type: ignore[no-any-return]

    def get_query(self, obj: RuntimeIntegration) -> dict[str, str]:
        return masked(obj)["query"]  # type: ignore[no-any-return]

    def get_headers(self, obj: RuntimeIntegration) -> dict[str, str]:
        return masked(obj)["headers"]  # type: ignore[no-any-return]

    def get_body(self, obj: RuntimeIntegration) -> Any:
        return masked(obj)["body"]

    def get_placeholders(self, obj: RuntimeIntegration) -> list[str]:
        return list(KINDS.get(obj.kind, ()))


class TestInputSerializer(serializers.Serializer):
    values = serializers.DictField(
        required=False,
        default=dict,
        help_text="Sample placeholder values; the kind's defaults fill in the rest.",
    )


class ProblemSerializer(serializers.Serializer):
    field = serializers.CharField(help_text="Where in the answer, e.g. `[0].retail_price` (empty: the whole).")
    message = serializers.CharField(help_text="What is wrong with it, for a person.")


class TestOutputSerializer(serializers.Serializer):
    ok = serializers.BooleanField(help_text="The call succeeded and its answer matches the kind's spec model.")
    status_code = serializers.IntegerField(
        allow_null=True, help_text="The integrator's HTTP status; null when no answer came (timeout, refused)."
    )
    duration_ms = serializers.IntegerField(help_text="How long the call took, in milliseconds.")
    data = JSONField(  # type: ignore[assignment]  # the answer's field, not Serializer.data
        allow_null=True, help_text="The answer after the transform."
    )
    problems = ProblemSerializer(
        many=True, help_text="Why the call failed or the answer does not match the kind's schema; empty when ok."
    )


class IntegrationCallFilterSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=list(KINDS), required=False)
    ok = serializers.BooleanField(required=False, allow_null=True, default=None)


class IntegrationCallOutputSerializer(serializers.ModelSerializer):
    integration = serializers.IntegerField(
        source="integration_id",
        read_only=True,
        allow_null=True,
        help_text="The id of the runtime integration called; null once it is deleted.",
    )

    class Meta:
        model = IntegrationCall
        fields = ["id", "integration", "kind", "ok", "status_code", "duration_ms", "error", "created_at"]
        extra_kwargs = {
            "id": {"help_text": "The call's id."},
            "kind": {"help_text": "The kind called."},
            "ok": {"help_text": "True: a 2xx answer that matches the kind's schema."},
            "status_code": {"help_text": "The integrator's HTTP status; null when no answer came."},
            "duration_ms": {"help_text": "How long the call took, in milliseconds."},
            "error": {"help_text": "Why it failed, secrets redacted (empty when ok)."},
            "created_at": {"help_text": "When the call was made (ISO 8601)."},
        }
