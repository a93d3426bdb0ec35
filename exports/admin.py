"""Back-office admin of exports: queues (created, changed and deleted through ``exports.services``, which record
each change in the audit trail), the export log, deliveries.

A queue's filters, transform and delivery are labelled fields by type (``exports.forms``; the admin's endpoints
in ``exports.admin_forms``), or JSON text areas under "Advanced (JSON)"; either way checked by
``services.validate_queue`` (its field errors land on the field they name). Secrets in the delivery are masked in
the form and a masked value submitted back keeps the stored one; a web hook secret the service generates is shown
once, in a message.
The export log and deliveries are a record: view-only, with retry actions that call ``services.retry_items``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, URLPattern, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from accounts import tryouts
from accounts.admin import (
    AccountOwnedAdmin,
    AccountScopedRelatedFilter,
    DeletedByServiceAdmin,
    ReadOnlyAdminMixin,
    RecordInline,
)
from accounts.models import Account
from core import jsonparse
from core.admin_fields import REASON_CHARS
from core.errors import ServiceError
from exports import circuit, selectors, services
from exports.admin_forms import QueueConfigAdmin
from exports.entities import REGISTRY
from exports.forms import QUEUE_FIELDS, QueueConfigForm
from exports.models import ExportAttempt, ExportDelivery, ExportItem, ExportQueue, ExportStatus
from exports.serializers import mask

# A "Retry failed items" action hands at most this many items of each selected queue to new deliveries.
MAX_QUEUE_RETRY = 10_000
_JSON_WIDGET = forms.Textarea(attrs={"rows": 8, "cols": 90, "class": "vLargeTextField json-config"})


class ExportQueueForm(QueueConfigForm):
    class Meta:
        model = ExportQueue
        fields = ["account", *QUEUE_FIELDS]
        widgets = {"filters": _JSON_WIDGET, "transform": _JSON_WIDGET, "delivery": _JSON_WIDGET}
        help_texts = {
            "delivery": (
                'E.g. {"type": "webhook", "url": "https://...", "headers": {}}. A web hook without a secret gets '
                'a generated one (shown once when you save); "secret": null generates a new one. Secrets show as '
                "******** and are kept when saved back unchanged."
            ),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            self.initial["delivery"] = mask(self.instance.delivery)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        problem = self.queue_problem(cleaned)
        if problem is not None:
            self._add_service_error(problem)
        if self.errors:
            return cleaned
        # On change the account is read-only, so the model's unique (account, name) check is skipped.
        name = cleaned.get("name")
        if (
            self.instance.pk is not None
            and name
            and ExportQueue.objects.filter(account_id=self.instance.account_id, name=name)
            .exclude(pk=self.instance.pk)
            .exists()
        ):
            self.add_error("name", "A queue with this name exists in the account.")
        account = cleaned.get("account")
        if self.instance.pk is None and isinstance(account, Account):
            limit = services.queue_limit_reached(account=account)
            if limit is not None:
                self.add_error("name", limit.message)
        return cleaned

    def _add_service_error(self, exc: ServiceError) -> None:
        """``delivery.url`` lands on the delivery field as "url: message"; an unknown field on the form."""
        head, _, rest = (exc.field or "").partition(".")
        if head in self.fields:
            self.add_error(head, f"{rest}: {exc.message}" if rest else exc.message)
        else:
            self.add_error(None, f"{exc.field}: {exc.message}" if exc.field else exc.message)


@admin.register(ExportQueue)
class ExportQueueAdmin(QueueConfigAdmin, DeletedByServiceAdmin):
    form = ExportQueueForm
    change_form_template = "admin/exports/exportqueue/change_form.html"
    list_display = [
        "name",
        "account",
        "entity_type",
        "trigger",
        "enabled",
        "transform_type",
        "delivery_type",
        "failed_items",
        "disabled_at",
        "updated_at",
    ]
    list_filter = ["account", "entity_type", "trigger", "enabled"]
    list_select_related = ["account"]
    search_fields = ["name", "account__identifier"]
    actions = ["retry_failed_items", "enable_queues"]
    fieldsets = [
        (None, {"fields": ["account", "name", "entity_type", "enabled", "filters"]}),
        ("Trigger", {"fields": ["trigger", "daily_at"]}),
        ("Transform and delivery", {"fields": ["transform", "delivery", "concurrency"]}),
        ("Destination health", {"fields": ["destination_circuit", "failing_since", "disabled_at", "disabled_reason"]}),
        ("Record", {"fields": ["created_at", "updated_at"]}),
    ]

    def get_readonly_fields(self, request: HttpRequest, obj: ExportQueue | None = None) -> list[str]:
        # A queue does not move between accounts: its items and deliveries belong to the account.
        record = ["destination_circuit", "failing_since", "disabled_at", "disabled_reason", "created_at", "updated_at"]
        return record if obj is None else ["account", *record]

    def get_queryset(self, request: HttpRequest) -> QuerySet[ExportQueue]:
        return (
            super().get_queryset(request).annotate(_failed=Count("items", filter=Q(items__status=ExportStatus.FAILURE)))
        )

    def save_model(self, request: HttpRequest, obj: ExportQueue, form: forms.ModelForm, change: bool) -> None:
        fields = {name: form.cleaned_data[name] for name in QUEUE_FIELDS}
        if change:
            stored = ExportQueue.objects.select_related("account").get(pk=obj.pk)
            queue, secret = services.update_queue(account=stored.account, queue=stored, **fields)
        else:
            queue, secret = services.create_queue(account=form.cleaned_data["account"], **fields)
        # The admin goes on to log the change and redirect with ``obj``: make it the saved row.
        for field in ExportQueue._meta.concrete_fields:
            setattr(obj, field.attname, getattr(queue, field.attname))
        obj._state.adding = False
        obj._state.db = queue._state.db
        if secret:
            messages.success(
                request,
                format_html(
                    'Web hook signing secret (shown once, copy it now): <code class="webhook-secret">{}</code>',
                    secret,
                ),
            )

    def delete_row(self, obj: ExportQueue) -> None:
        services.delete_queue(account=obj.account, queue=obj)

    def get_urls(self) -> list[URLPattern]:
        return [
            self.page("<path:object_id>/preview/", self.preview_view, "preview"),
            self.page("preview-unsaved/", self.preview_unsaved_view, "preview_unsaved"),
            *super().get_urls(),
        ]

    def preview_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The queue's transform rendered on the newest stored entity of its type (or ``?object_id=``)."""
        queue = self.get_object(request, object_id)
        if queue is None or not self.has_view_permission(request, queue):
            raise Http404
        wanted = request.GET.get("object_id", "")
        context: dict[str, Any] = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": queue,
            "title": f"Preview of {queue}",
            "change_url": reverse("admin:exports_exportqueue_change", args=[queue.pk]),
        }
        try:
            tryouts.charge(account=queue.account, caller=f"user:{request.user.pk}")
            rendered, element_key = services.preview(
                queue=queue, object_id=int(wanted) if wanted.isdigit() and len(wanted) < 19 else None
            )
        except ServiceError as exc:
            context["error"] = exc.message
        else:
            context.update(
                element_key=element_key,
                content_type=rendered.content_type,
                extension=rendered.extension,
                content=rendered.content.decode("utf-8", errors="replace"),
            )
        return TemplateResponse(request, "admin/exports/exportqueue/preview.html", context)

    def preview_unsaved_view(self, request: HttpRequest) -> HttpResponse:
        """The add or change form's transform, as typed and not saved, rendered on the newest stored entity of the
        form's entity type (the form's "Preview unsaved transform" button posts here, into a new tab)."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        queue_id = request.POST.get("_queue", "")
        queue = self.get_object(request, queue_id) if queue_id.isdigit() and len(queue_id) < 19 else None
        if queue is not None:
            if not self.has_change_permission(request, queue):
                raise Http404
            account = queue.account
        else:
            if not self.has_add_permission(request):
                raise Http404
            account_id = request.POST.get("account", "")
            account = (
                Account.objects.filter(pk=int(account_id)).first()
                if account_id.isdigit() and len(account_id) < 19
                else None
            )
        context: dict[str, Any] = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": queue,
            "title": "Preview of unsaved changes",
            "change_url": reverse("admin:exports_exportqueue_change", args=[queue.pk]) if queue else "",
            "unsaved": True,
        }
        try:
            if account is None:
                raise ServiceError("choose the account first", field="account")
            try:
                transform = jsonparse.loads(request.POST.get("transform", ""))
            except ServiceError as exc:
                raise ServiceError(f"the transform is not valid JSON: {exc.message}", field="transform") from None
            entity_type = request.POST.get("entity_type", "")
            tryouts.charge(account=account, caller=f"user:{request.user.pk}")
            rendered, element_key = services.preview_config(
                account=account, entity_type=entity_type, transform=transform
            )
        except ServiceError as exc:
            context["error"] = f"{exc.field}: {exc.message}" if exc.field else exc.message
        else:
            context.update(
                transform_type=transform.get("type", ""),
                entity_type=entity_type,
                element_key=element_key,
                content_type=rendered.content_type,
                extension=rendered.extension,
                content=rendered.content.decode("utf-8", errors="replace"),
            )
        return TemplateResponse(request, "admin/exports/exportqueue/preview.html", context)

    @admin.action(description="Retry failed items", permissions=["change"])
    def retry_failed_items(self, request: HttpRequest, queryset: QuerySet[ExportQueue]) -> None:
        retried = 0
        for queue in queryset.select_related("account"):
            items = selectors.retryable_items(account=queue.account, queue=queue, limit=MAX_QUEUE_RETRY)
            if items:
                retried += services.retry_items(account=queue.account, items=items)
        self.message_user(request, f"Retried {retried} failed item(s).", messages.SUCCESS)

    @admin.action(description="Enable (and close the destination's circuit breaker)", permissions=["change"])
    def enable_queues(self, request: HttpRequest, queryset: QuerySet[ExportQueue]) -> None:
        enabled = 0
        for queue in queryset.select_related("account"):
            circuit.enable_queue(account=queue.account, queue=queue)
            enabled += 1
        self.message_user(request, f"Enabled {enabled} queue(s).", messages.SUCCESS)

    @admin.display(description="destination circuit breaker")
    def destination_circuit(self, obj: ExportQueue) -> str:
        return circuit.describe(obj) if obj.pk is not None else "-"

    @admin.display(description="transform")
    def transform_type(self, obj: ExportQueue) -> str:
        return str(obj.transform.get("type", ""))

    @admin.display(description="delivery")
    def delivery_type(self, obj: ExportQueue) -> str:
        return str(obj.delivery.get("type", ""))

    @admin.display(description="failed items", ordering="_failed")
    def failed_items(self, obj: ExportQueue) -> int:
        return obj._failed  # type: ignore[attr-defined, no-any-return]


@admin.register(ExportItem)
class ExportItemAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    """The export log: one row per entity per queue, with the outcome of its delivery."""

    list_display = [
        "id",
        "created_at",
        "queue",
        "entity_type",
        "element_key",
        "entity_link",
        "status",
        "reason",
        "status_code",
        "attempts",
        "next_retry",
        "account",
    ]
    list_filter = ["status", ("queue", AccountScopedRelatedFilter), "entity_type", "created_at", "account"]
    list_select_related = ["account", "queue", "delivery"]
    search_fields = ["element_key"]
    actions = ["retry_selected"]
    fields = [
        "account",
        "queue",
        "entity_type",
        "object_id",
        "element_key",
        "entity_link",
        "status",
        "message",
        "reason",
        "delivery_link",
        "attempts",
        "status_code",
        "next_retry",
        "created_at",
    ]
    readonly_fields = ["entity_link", "reason", "delivery_link", "attempts", "status_code", "next_retry"]

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        return super().changelist_view(request, {"title": "Export log", **(extra_context or {})})

    def has_retry_permission(self, request: HttpRequest) -> bool:
        # The log is view-only (no change form), but retrying is a change staff may be allowed.
        return request.user.has_perm("exports.change_exportitem")

    @admin.action(description="Retry selected items", permissions=["retry"])
    def retry_selected(self, request: HttpRequest, queryset: QuerySet[ExportItem]) -> None:
        chosen = list(queryset.select_related("account"))
        by_account: dict[int, list[ExportItem]] = {}
        for item in chosen:
            if item.status != ExportStatus.PENDING:
                by_account.setdefault(item.account_id, []).append(item)
        retried = sum(services.retry_items(account=items[0].account, items=items) for items in by_account.values())
        self.message_user(request, f"Retried {retried} item(s).", messages.SUCCESS)
        if retried < len(chosen):
            self.message_user(
                request, f"Left {len(chosen) - retried} pending item(s) alone: still on their way.", messages.WARNING
            )

    @admin.display(description="delivery")
    def delivery_link(self, obj: ExportItem) -> SafeString | str:
        if obj.delivery is None:
            return "waiting for its cron window"
        url = reverse("admin:exports_exportdelivery_change", args=[obj.delivery.pk])
        return format_html('<a href="{}">{}</a> ({})', url, obj.delivery.delivery_id, obj.delivery.status)

    @admin.display(description="attempts")
    def attempts(self, obj: ExportItem) -> int:
        return obj.delivery.attempts if obj.delivery is not None else 0

    @admin.display(description="reason")
    def reason(self, obj: ExportItem) -> str:
        """Why it failed or was skipped: the delivery's last error (what the destination answered), else the
        item's own message."""
        error = obj.delivery.error if obj.delivery is not None else ""
        return Truncator(error or obj.message).chars(REASON_CHARS)

    @admin.display(description="next retry")
    def next_retry(self, obj: ExportItem) -> datetime | None:
        delivery = obj.delivery
        if delivery is None or obj.status != ExportStatus.PENDING:
            return None
        return delivery.next_attempt_at

    @admin.display(description="entity")
    def entity_link(self, obj: ExportItem) -> SafeString | str:
        """The entity the item carries, on its own admin page."""
        definition = REGISTRY.get(obj.entity_type)
        if definition is None:
            return str(obj.object_id)
        app_label, model_name = definition.model_label.lower().split(".")
        try:
            url = reverse(f"admin:{app_label}_{model_name}_change", args=[obj.object_id])
        except NoReverseMatch:
            return str(obj.object_id)
        return format_html('<a href="{}">{} {}</a>', url, definition.model_label.split(".")[1], obj.object_id)

    @admin.display(description="status code")
    def status_code(self, obj: ExportItem) -> int | None:
        return obj.delivery.status_code if obj.delivery is not None else None


class ExportAttemptInline(RecordInline):
    model = ExportAttempt
    fields = ["number", "ok", "status_code", "error", "duration_ms", "started_at", "sent", "answer"]


@admin.register(ExportDelivery)
class ExportDeliveryAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    list_display = [
        "delivery_id",
        "queue",
        "account",
        "window",
        "status",
        "attempts",
        "status_code",
        "next_attempt_at",
        "paused_until",
        "created_at",
        "finished_at",
    ]
    list_filter = ["status", ("queue", AccountScopedRelatedFilter), "account"]
    list_select_related = ["account", "queue"]
    search_fields = ["delivery_id"]
    inlines = [ExportAttemptInline]
    fields = [
        "account",
        "queue",
        "delivery_id",
        "window",
        "status",
        "attempts",
        "next_attempt_at",
        "lease_until",
        "paused_until",
        "pause_reason",
        "handed_off_at",
        "status_code",
        "error",
        "duration_ms",
        "created_at",
        "finished_at",
    ]
