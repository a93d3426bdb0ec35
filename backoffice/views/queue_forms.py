"""An export queue created, changed and deleted by a member (owner, manager), with the typed form the admin uses
(``exports.forms.QueueForm``). One form does three things, by the button pressed (``do``): ``save``; ``preview``,
the transform as typed rendered on a stored entity, nothing saved; ``test``, one test delivery of the
configuration as typed to its destination, nothing saved. Previews and test sends count against the account's and
the person's try-out limits (``accounts.tryouts``, as the API's and the admin's do)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.text import Truncator
from django.utils.translation import gettext as _

from accounts import tryouts
from accounts.policy import Action
from backoffice.members import member_view
from backoffice.views.exports import account_queue
from core.errors import ServiceError
from exports import services
from exports.forms import ANSWER_CHARS, CONFIG_FIELDS, QueueForm, pretty
from exports.models import ExportQueue

__all__ = ("queue_delete", "queue_edit", "queue_new")

# The buttons of the form, by the value of ``do``.
SAVE, PREVIEW, TEST = "save", "preview", "test"
_BASICS = ("name", "entity_type", "enabled", "trigger", "daily_at", "concurrency")


@member_view(Action.MANAGE_EXPORT_QUEUES, methods=("GET", "HEAD", "POST"))
def queue_new(request: HttpRequest) -> HttpResponse:
    account = request.member.account  # type: ignore[attr-defined]
    if request.method != "POST":
        return _page(request, QueueForm(account=account), queue=None)
    return _submitted(request, QueueForm(request.POST, account=account), queue=None)


@member_view(Action.MANAGE_EXPORT_QUEUES, methods=("GET", "HEAD", "POST"))
def queue_edit(request: HttpRequest, pk: int) -> HttpResponse:
    queue = account_queue(request, pk)
    if request.method != "POST":
        return _page(request, QueueForm(account=queue.account, instance=queue), queue=queue)
    # The form writes what was posted into its instance as it validates: ``queue`` stays the stored row, which
    # the services compare with (the audit's "before", the secret kept).
    edited = account_queue(request, pk)
    return _submitted(request, QueueForm(request.POST, account=queue.account, instance=edited), queue=queue)


@member_view(Action.MANAGE_EXPORT_QUEUES, methods=("GET", "HEAD", "POST"))
def queue_delete(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: what deleting takes with it, and the button; POST: the queue deleted with its log and deliveries."""
    queue = account_queue(request, pk)
    if request.method != "POST":
        return render(request, "backoffice/exports/queue_delete.html", {"queue": queue})
    name = queue.name
    services.delete_queue(account=queue.account, queue=queue)
    messages.success(request, _("The queue %(name)s is deleted.") % {"name": name})
    return HttpResponseRedirect(reverse("backoffice:queues"))


def _submitted(request: HttpRequest, form: QueueForm, *, queue: ExportQueue | None) -> HttpResponse:
    wanted = request.POST.get("do", SAVE)
    if wanted == PREVIEW:
        return _preview(request, form, queue=queue)
    if wanted == TEST:
        if queue is None:
            refused = {"error": _("Create the queue first, then send a test from its page.")}
            return _page(request, form, queue=queue, status=400, test=refused)
        return _test(request, form, queue=queue)
    if not form.is_valid():
        return _page(request, form, queue=queue, status=400)
    account = form.account
    try:
        if queue is None:
            saved, secret = services.create_queue(account=account, **form.queue_fields())
        else:
            saved, secret = services.update_queue(account=account, queue=queue, **form.queue_fields())
    except ServiceError as exc:
        form.add_service_error(exc)
        return _page(request, form, queue=queue, status=400)
    text = _("The queue %(name)s is created.") if queue is None else _("The queue %(name)s is saved.")
    messages.success(request, text % {"name": saved.name})
    if secret:
        shown = _("Web hook signing secret (shown once, copy it now): %(secret)s") % {"secret": secret}
        messages.success(request, shown)
    warning = services.destination_warning(delivery=saved.delivery)
    if warning:
        messages.warning(request, _("Saved, but check the destination. %(warning)s") % {"warning": warning})
    return HttpResponseRedirect(reverse("backoffice:queue", args=[saved.pk]))


def _charged(request: HttpRequest, form: QueueForm, *, queue: ExportQueue | None) -> HttpResponse | None:
    """Count one try-out of the person in the account; past a limit, the form again with why (429)."""
    try:
        tryouts.charge(account=form.account, caller=f"user:{request.user.pk}")
    except tryouts.RateLimited as exc:
        limited = _("Too many previews and test sends in a short time: try again in %(seconds)d seconds.") % {
            "seconds": exc.wait
        }
        response = _page(request, form, queue=queue, status=429, limited=limited)
        response["Retry-After"] = str(exc.wait)
        return response
    return None


def _preview(request: HttpRequest, form: QueueForm, *, queue: ExportQueue | None) -> HttpResponse:
    """The transform as typed rendered on the entity typed in, else the newest of the entity type."""
    # Counted before the form is validated: validating compiles the template.
    refused = _charged(request, form, queue=queue)
    if refused is not None:
        return refused
    form.is_valid()
    transform = form.tried_transform()
    if transform is None:
        return _page(request, form, queue=queue, status=400, preview={"error": _("The transform is not complete.")})
    try:
        rendered, element_key = services.preview_config(
            account=form.account,
            entity_type=str(form.cleaned_data.get("entity_type") or ""),
            transform=transform,
            object_id=form.cleaned_data.get("preview_object"),
        )
    except ServiceError as exc:
        return _page(request, form, queue=queue, preview={"error": _problem(exc)})
    preview = {
        "content": pretty(rendered.content.decode("utf-8", errors="replace"), rendered.content_type),
        "content_type": rendered.content_type,
        "element_key": element_key,
    }
    return _page(request, form, queue=queue, preview=preview)


def _test(request: HttpRequest, form: QueueForm, *, queue: ExportQueue) -> HttpResponse:
    """One test delivery of the configuration as typed (valid), to its destination; nothing saved."""
    refused = _charged(request, form, queue=queue)
    if refused is not None:
        return refused
    if not form.is_valid():
        return _page(request, form, queue=queue, status=400)
    try:
        sent = services.send_test_config(
            account=form.account,
            queue=queue,
            entity_type=form.cleaned_data["entity_type"],
            transform=form.cleaned_data["transform"],
            delivery=form.cleaned_data["delivery"],
            object_id=form.cleaned_data.get("preview_object"),
        )
    except ServiceError as exc:
        return _page(request, form, queue=queue, test={"error": _problem(exc)})
    result = sent.result
    test = {
        "ok": result.ok,
        "status_code": result.status_code,
        "duration_ms": sent.duration_ms,
        "answer": Truncator(result.answer if result.ok else result.error).chars(ANSWER_CHARS),
        "element_key": sent.element_key,
        "delivery_id": sent.delivery_id,
    }
    return _page(request, form, queue=queue, test=test)


def _problem(exc: ServiceError) -> str:
    return f"{exc.field}: {exc.message}" if exc.field else exc.message


def _page(
    request: HttpRequest, form: QueueForm, *, queue: ExportQueue | None, status: int = 200, **shown: Any
) -> HttpResponse:
    """The form by group: the queue's own fields, then filters, transform and delivery (each typed field with the
    types it is for: without a script every type's fields show), then the JSON."""
    kinds = {f.name: ", ".join(f.types) for f in CONFIG_FIELDS if f.group != "filters"}

    def typed(group: str, lead: tuple[str, ...] = ()) -> list[tuple[Any, str]]:
        names = [*lead, *(f.name for f in CONFIG_FIELDS if f.group == group)]
        return [(form[name], kinds.get(name, "")) for name in names]

    groups = [
        (_("Filters"), typed("filters")),
        (_("Transform"), typed("transform", ("transform__type",))),
        (_("Delivery"), typed("delivery", ("delivery__type",))),
    ]
    context = {
        "form": form,
        "queue": queue,
        "basics": [form[name] for name in _BASICS],
        "groups": groups,
        "json_fields": [form[name] for name in ("edit_json", "filters", "transform", "delivery")],
        **shown,
    }
    return render(request, "backoffice/exports/queue_form.html", context, status=status)
