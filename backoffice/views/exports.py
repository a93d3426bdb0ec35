"""Export queues (their health, enable and disable) and the export log (filters, each delivery's attempts,
retry)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from accounts.policy import Action
from backoffice import selectors
from backoffice.members import member_view
from backoffice.pages import newest_first
from core.errors import ServiceError
from exports import circuit, services
from exports.models import ExportItem, ExportQueue, ExportStatus
from exports.selectors import export_items, export_queues


def account_queue(request: HttpRequest, pk: int) -> ExportQueue:
    """The member's account's queue, else 404 (another account's queue is not found, never refused)."""
    return get_object_or_404(export_queues(account=request.member.account), pk=pk)  # type: ignore[attr-defined]


@member_view()
def queue_list(request: HttpRequest) -> HttpResponse:
    health = selectors.queue_health(account=request.member.account)  # type: ignore[attr-defined]
    return render(request, "backoffice/exports/queues.html", {"queues": health})


@member_view()
def queue_detail(request: HttpRequest, pk: int) -> HttpResponse:
    queue = account_queue(request, pk)
    health = next(h for h in selectors.queue_health(account=queue.account) if h.queue.pk == queue.pk)
    items = newest_first(export_items(account=queue.account, queue=queue.pk), request, size=20)
    context = {"health": health, "queue": queue, "page": items, "output": selectors.queue_output(queue=queue)}
    return render(request, "backoffice/exports/queue.html", context)


@member_view(Action.MANAGE_EXPORT_QUEUES, methods=("POST",))
def queue_enable(request: HttpRequest, pk: int) -> HttpResponse:
    queue = account_queue(request, pk)
    circuit.enable_queue(account=queue.account, queue=queue)
    messages.success(request, _("The queue %(name)s is enabled.") % {"name": queue.name})
    return HttpResponseRedirect(reverse("backoffice:queue", args=[queue.pk]))


@member_view(Action.MANAGE_EXPORT_QUEUES, methods=("POST",))
def queue_disable(request: HttpRequest, pk: int) -> HttpResponse:
    queue = account_queue(request, pk)
    services.update_queue(account=queue.account, queue=queue, enabled=False)
    messages.success(request, _("The queue %(name)s is disabled.") % {"name": queue.name})
    return HttpResponseRedirect(reverse("backoffice:queue", args=[queue.pk]))


# Items one retry sends again (a page of the log holds fewer).
MAX_RETRY = 200

# The export log's filters, as the query string names them.
LOG_FILTERS = ("queue", "status", "entity_type", "element_key")


@member_view()
def export_log(request: HttpRequest) -> HttpResponse:
    account = request.member.account  # type: ignore[attr-defined]
    chosen = {name: request.GET.get(name, "").strip() for name in LOG_FILTERS}
    queue = int(chosen["queue"]) if chosen["queue"].isdigit() else None
    items = export_items(
        account=account,
        queue=queue,
        status=chosen["status"] if chosen["status"] in ExportStatus.values else None,
        entity_type=chosen["entity_type"] or None,
        element_key=chosen["element_key"] or None,
    )
    context = {
        "page": newest_first(items, request),
        "chosen": chosen,
        "queues": list(export_queues(account=account).values_list("pk", "name")),
        "statuses": ExportStatus.choices,
        "query": request.GET.urlencode(),
    }
    return render(request, "backoffice/exports/log.html", context)


@member_view()
def export_item(request: HttpRequest, pk: int) -> HttpResponse:
    account = request.member.account  # type: ignore[attr-defined]
    item = get_object_or_404(export_items(account=account, with_attempts=True), pk=pk)
    attempts = list(item.delivery.attempt_log.all()) if item.delivery is not None else []
    return render(request, "backoffice/exports/item.html", {"item": item, "attempts": attempts})


@member_view(Action.RETRY_EXPORTS, methods=("POST",))
def export_retry(request: HttpRequest) -> HttpResponse:
    """Send the chosen failed items again (each one's queue, as the API's retry does)."""
    account = request.member.account  # type: ignore[attr-defined]
    ids = [int(pk) for pk in request.POST.getlist("item") if pk.isdigit()][:MAX_RETRY]
    chosen = list(ExportItem.objects.filter(account=account, pk__in=ids).exclude(status=ExportStatus.PENDING))
    try:
        sent = services.retry_items(account=account, items=chosen) if chosen else 0
    except ServiceError as exc:
        messages.error(request, str(exc))
        sent = 0
    if sent:
        text = ngettext("%(n)d item will be sent again.", "%(n)d items will be sent again.", sent)
        messages.success(request, text % {"n": sent})
    elif ids:
        messages.warning(request, _("Nothing to send again: the chosen items are still on their way."))
    back = request.POST.get("next", "")
    return HttpResponseRedirect(back if back.startswith("/backoffice/") else reverse("backoffice:export-log"))
