"""The admin's side of the export queue form by type (``exports.forms``): its fieldsets, the JSON endpoint the
form reads the entity type's placeholders and recent entities from, the live preview on the same page, "Send a
test delivery", and the warning on save when the outbound guard will refuse the destination.

Staff see only the chosen types' fields: ``static/admin/backoffice/queue_form.js`` shows and hides the rows, and
the raw JSON is in the collapsed "Advanced (JSON)" section.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect, JsonResponse
from django.urls import URLPattern, path, reverse
from django.utils.text import Truncator

from accounts import tryouts
from accounts.models import Account
from core.errors import ServiceError
from core.jsonenc import DecimalJSONEncoder
from exports import selectors, services
from exports.forms import ANSWER_CHARS, CONFIG_FIELDS, QueueConfigForm, pretty
from exports.models import ExportQueue
from exports.serializers import mask

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldsetSpec

__all__ = ("QueueConfigAdmin", "QueueConfigForm")


class QueueConfigAdmin:
    """Mixed into ``ExportQueueAdmin``: the typed fieldsets and the form's endpoints (entity placeholders and
    recent entities, live preview, test delivery) and the outbound guard's warning on save."""

    TYPED_FIELDSETS: tuple[tuple[str, list[str]], ...] = (
        ("Filters", [f.name for f in CONFIG_FIELDS if f.group == "filters"]),
        ("Transform", ["transform__type", *[f.name for f in CONFIG_FIELDS if f.group == "transform"]]),
        ("Delivery", ["delivery__type", *[f.name for f in CONFIG_FIELDS if f.group == "delivery"]]),
    )

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> _FieldsetSpec:
        """The admin's fieldsets without the JSON fields, then the typed ones, then "Advanced (JSON)"."""
        raw = {"filters", "transform", "delivery"}
        kept: list[Any] = []
        record: list[Any] = []
        for name, options in super().get_fieldsets(request, obj):  # type: ignore[misc]
            fields = [f for f in options.get("fields", []) if f not in raw]
            if not fields:
                continue
            (record if name == "Record" else kept).append((name, {**options, "fields": fields}))
        typed: list[Any] = [
            (name, {"fields": fields, "classes": [f"config-{name.lower()}"]}) for name, fields in self.TYPED_FIELDSETS
        ]
        advanced: Any = (
            "Advanced (JSON)",
            {"fields": ["edit_json", "filters", "transform", "delivery"], "classes": ["collapse", "config-json"]},
        )
        return [*kept, *typed, advanced, *record]

    def get_urls(self) -> list[URLPattern]:
        site = self.admin_site  # type: ignore[attr-defined]
        return [
            path("entities/", site.admin_view(self.entities_view), name="exports_exportqueue_entities"),
            path("preview-live/", site.admin_view(self.preview_live_view), name="exports_exportqueue_preview_live"),
            path(
                "<path:object_id>/test-delivery/",
                site.admin_view(self.test_delivery_view),
                name="exports_exportqueue_test_delivery",
            ),
            *super().get_urls(),  # type: ignore[misc]
        ]

    def _account(self, request: HttpRequest, data: Any) -> tuple[ExportQueue | None, Account | None]:
        """The queue being edited (``_queue``) and its account, or the account chosen on the add form."""
        queue_id = str(data.get("_queue", ""))
        if queue_id.isdigit() and len(queue_id) < 19:
            queue = self.get_object(request, queue_id)  # type: ignore[attr-defined]
            if queue is None or not self.has_change_permission(request, queue):  # type: ignore[attr-defined]
                raise Http404
            return queue, queue.account
        if not self.has_add_permission(request):  # type: ignore[attr-defined]
            raise Http404
        account_id = str(data.get("account", ""))
        if account_id.isdigit() and len(account_id) < 19:
            return None, Account.objects.filter(pk=int(account_id)).first()
        return None, None

    def entities_view(self, request: HttpRequest) -> HttpResponse:
        """JSON for the form: the entity type's value paths (placeholders) and the account's recent entities."""
        _queue, account = self._account(request, request.GET)
        entity_type = request.GET.get("entity_type", "")
        if account is None:
            return JsonResponse({"entities": [], "paths": [], "note": "Choose the account first."})
        recent = selectors.recent_entities(account=account, entity_type=entity_type)
        paths = selectors.entity_paths(account=account, entity_type=entity_type)
        note = "" if recent else "No stored entity of this type yet: the fields appear once one is stored."
        return JsonResponse(
            {"entities": [{"id": pk, "label": f"{key} (#{pk})"} for pk, key in recent], "paths": paths, "note": note}
        )

    def preview_live_view(self, request: HttpRequest) -> HttpResponse:
        """The form's transform as typed (not saved) rendered on the chosen entity; JSON for the page's script:
        ``{ok, content, content_type, element_key}`` or ``{ok: false, error}``. JSON output is indented."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        queue, account = self._account(request, request.POST)
        if account is not None:  # counted before the form is validated: validating compiles the template
            try:
                tryouts.charge(account=account, caller=f"user:{request.user.pk}")
            except tryouts.RateLimited as exc:
                limited = JsonResponse({"ok": False, "error": exc.message}, status=429)
                limited["Retry-After"] = str(exc.wait)
                return limited
        form_class = self.get_form(request, queue)  # type: ignore[attr-defined]
        form = form_class(request.POST, instance=queue)
        form.is_valid()
        object_id = request.POST.get("_preview_object", "")
        # The fields as JSON (secrets masked): what "Edit the JSON instead" starts from.
        config = {**form.assembled, "delivery": mask(form.assembled["delivery"])} if form.assembled else None
        try:
            if account is None:
                raise ServiceError("choose the account first", field="account")
            transform = form.assembled.get("transform") if not form.json_mode else form.cleaned_data.get("transform")
            if transform is None:
                problems = "; ".join(
                    f"{form.fields[name].label if name in form.fields else name}: {' '.join(errors)}"
                    for name, errors in form.errors.items()
                )
                raise ServiceError(problems or "the transform is not complete")
            rendered, element_key = services.preview_config(
                account=account,
                entity_type=request.POST.get("entity_type", ""),
                transform=transform,
                object_id=int(object_id) if object_id.isdigit() and len(object_id) < 19 else None,
            )
        except ServiceError as exc:
            error = f"{exc.field}: {exc.message}" if exc.field else exc.message
            return JsonResponse({"ok": False, "error": error, "config": config}, encoder=DecimalJSONEncoder)
        return JsonResponse(
            {
                "ok": True,
                "config": config,
                "content": pretty(rendered.content.decode("utf-8", errors="replace"), rendered.content_type),
                "content_type": rendered.content_type,
                "element_key": element_key,
            },
            encoder=DecimalJSONEncoder,
        )

    def test_delivery_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Send the saved queue's export of one entity (``_preview_object``, else the newest) once to its
        destination and report the answer as a message on the queue's page."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        queue = self.get_object(request, object_id)  # type: ignore[attr-defined]
        if queue is None or not self.has_change_permission(request, queue):  # type: ignore[attr-defined]
            raise Http404
        wanted = request.POST.get("_preview_object", "")
        back = HttpResponseRedirect(reverse("admin:exports_exportqueue_change", args=[queue.pk]))
        try:
            tryouts.charge(account=queue.account, caller=f"user:{request.user.pk}")
            result, element_key, delivery_id = services.send_test_delivery(
                queue=queue, object_id=int(wanted) if wanted.isdigit() and len(wanted) < 19 else None
            )
        except ServiceError as exc:
            messages.error(request, f"Test delivery not sent: {exc.message}.")
            return back
        code = f"HTTP {result.status_code}" if result.status_code is not None else "no status code"
        if result.ok:
            answer = Truncator(result.answer).chars(ANSWER_CHARS)
            messages.success(
                request,
                f"Test delivery {delivery_id} of {element_key} sent: the destination answered {code}"
                + (f": {answer}" if answer else "."),
            )
        else:
            messages.error(
                request,
                f"Test delivery {delivery_id} of {element_key} failed ({code}): "
                f"{Truncator(result.error).chars(ANSWER_CHARS)}",
            )
        return back

    def save_related(self, request: HttpRequest, form: forms.ModelForm, formsets: Any, change: bool) -> None:
        # After ``save_model`` (the queue admin's own, which saves through the services), on add and on change.
        super().save_related(request, form, formsets, change)  # type: ignore[misc]
        warning = services.destination_warning(delivery=form.instance.delivery)
        if warning:
            messages.warning(request, f"Saved, but check the destination. {warning}")
