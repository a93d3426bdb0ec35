"""Back-office admin of runtime integrations (saved and deleted through ``integrations.services``, which record
each change in the audit trail) and their call log.

Query parameters and headers are tables of name/value rows (``core.widgets.RowsWidget``, which posts the JSON the
REST API takes); the body and the declared secret places are JSON text areas in a monospace font; the chosen
kind's placeholders are listed beside the URL. Secrets are masked in the form and a masked value submitted back
keeps the stored one, by the same rule as the REST API (``services.unmasked``); the form (``integrations.forms``,
the back-office's too) is checked by the service's own ``configuration_errors``. "Test this integration" calls the
integrator with sample values and shows the answer field by field. The call log is a record: view-only.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, reverse

from accounts import tryouts
from accounts.admin import AccountOwnedAdmin, DeletedByServiceAdmin, ReadOnlyAdminMixin, adopt
from core import breaker, jsonparse
from core.errors import ServiceError
from core.jsonenc import DecimalJSONEncoder
from core.secrets import MASK
from core.widgets import RowsWidget
from integrations import forms as integration_forms
from integrations import runtime, services
from integrations.kinds import KINDS
from integrations.models import IntegrationCall, RuntimeIntegration

_QUERY_WIDGET = RowsWidget(
    shape="object",
    add_label="Add a parameter",
    mask=MASK,
    columns=[{"key": "name", "label": "Parameter"}, {"key": "value", "label": "Value (template)"}],
)
_HEADERS_WIDGET = RowsWidget(
    shape="object",
    add_label="Add a header",
    mask=MASK,
    columns=[{"key": "name", "label": "Header"}, {"key": "value", "label": "Value (template)"}],
)


class RuntimeIntegrationForm(integration_forms.RuntimeIntegrationForm):
    """The shared form (``integrations.forms``) with the account to choose on add and rows for the query and the
    headers."""

    class Meta(integration_forms.RuntimeIntegrationForm.Meta):
        fields = ["account", *services.FIELDS]
        widgets = {
            **integration_forms.RuntimeIntegrationForm.Meta.widgets,
            "query": _QUERY_WIDGET,
            "headers": _HEADERS_WIDGET,
        }


@admin.register(RuntimeIntegration)
class RuntimeIntegrationAdmin(DeletedByServiceAdmin):
    form = RuntimeIntegrationForm
    change_form_template = "admin/integrations/runtimeintegration/change_form.html"
    list_display = ["kind", "account", "enabled", "method", "shown_url", "timeout", "updated_at"]
    list_filter = ["account", "kind", "enabled"]
    list_select_related = ["account"]
    # Not the URL: a search would tell whether a masked part holds a given text.
    search_fields = ["account__identifier"]
    fieldsets = [
        (None, {"fields": ["account", "kind", "enabled"]}),
        ("Request", {"fields": ["method", "url", "query", "headers", "body", "secret_fields", "timeout"]}),
        ("Answer", {"fields": ["transform"]}),
        ("Record", {"fields": ["circuit_breaker", "created_at", "updated_at"]}),
    ]

    @admin.display(description="circuit breaker of the integrator's endpoint")
    def circuit_breaker(self, obj: RuntimeIntegration) -> str:
        if obj.pk is None:
            return "-"
        return breaker.describe(runtime.breaker_target(obj.account, obj.url))

    @admin.display(description="URL")
    def shown_url(self, obj: RuntimeIntegration) -> str:
        return obj.masked_url

    def get_readonly_fields(self, request: HttpRequest, obj: RuntimeIntegration | None = None) -> list[str]:
        record = ["circuit_breaker", "created_at", "updated_at"]
        return record if obj is None else ["account", *record]

    def render_change_form(self, request: HttpRequest, context: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        # The page's script lists the chosen kind's placeholders beside the URL.
        context["kind_placeholders"] = {kind: ["{" + name + "}" for name in names] for kind, names in KINDS.items()}
        return super().render_change_form(request, context, *args, **kwargs)

    def save_model(self, request: HttpRequest, obj: RuntimeIntegration, form: forms.ModelForm, change: bool) -> None:
        data = {name: form.cleaned_data[name] for name in services.FIELDS}
        if change:
            stored = RuntimeIntegration.objects.select_related("account").get(pk=obj.pk)
            account, instance = stored.account, stored
        else:
            account, instance = form.cleaned_data["account"], None
        # The form ran the service's checks, so this cannot refuse (short of a concurrent save of the same kind).
        saved = services.save_runtime_integration(account=account, integration=instance, data=data)
        adopt(obj, saved)

    def delete_row(self, obj: RuntimeIntegration) -> None:
        services.delete_runtime_integration(account=obj.account, integration=obj)

    def get_urls(self) -> list[URLPattern]:
        return [self.page("<path:object_id>/test/", self.test_view, "test"), *super().get_urls()]

    def test_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Calls the integrator with sample values (GET: the kind's defaults; POST: the values typed) and shows
        the result field by field."""
        integration = self.get_object(request, object_id)
        if integration is None or not self.has_change_permission(request, integration):
            raise Http404
        values: dict[str, Any] = dict(services.SAMPLE_VALUES.get(integration.kind, {}))
        values_error = ""
        if request.method == "POST":
            try:
                posted = jsonparse.loads(request.POST.get("values", "") or "{}")
                if not isinstance(posted, dict):
                    raise ServiceError("not an object")
                values.update(posted)
            except ServiceError:
                values_error = "The sample values must be a JSON object of placeholder -> value."
        try:
            tryouts.charge(account=integration.account, caller=f"user:{request.user.pk}")
            result = services.test_runtime_integration(
                account=integration.account, integration=integration, values=values
            )
        except ServiceError as exc:
            result = {"ok": False, "status_code": None, "duration_ms": 0, "data": None, "problems": []}
            result["problems"] = [{"field": exc.field or "", "message": exc.message}]
        context: dict[str, Any] = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": integration,
            "title": f"Test of {integration}",
            "change_url": reverse("admin:integrations_runtimeintegration_change", args=[integration.pk]),
            "result": result,
            "data_text": json.dumps(result["data"], cls=DecimalJSONEncoder, indent=2, ensure_ascii=False),
            "values_text": json.dumps(values, cls=DecimalJSONEncoder, indent=2, ensure_ascii=False),
            "values_error": values_error,
        }
        return TemplateResponse(request, "admin/integrations/runtimeintegration/test.html", context)


@admin.register(IntegrationCall)
class IntegrationCallAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    list_display = ["created_at", "account", "kind", "ok", "status_code", "duration_ms", "error"]
    list_filter = ["account", "kind", "ok", "created_at"]
    list_select_related = ["account"]
    search_fields = ["error", "account__identifier"]
