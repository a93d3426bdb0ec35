"""The demo's web hook receiver: where the demo account's export queue delivers, so that the first import of a
fresh ``make run`` shows a delivery in the export log (and a line in the log) without any other server.

Routed only outside production (``DEMO_RECEIVER``, default: on in development). It reads at most
``MAX_BYTES`` of a body, keeps nothing, logs one line per delivery (its ``webhook-id`` and size, never the body)
and answers 200 ``{"received": <bytes>}``.
"""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponseNotAllowed, JsonResponse
from django.views.decorators.csrf import csrf_exempt

logger = logging.getLogger(__name__)
MAX_BYTES = 1024 * 1024
PATH = "demo/receiver"


@csrf_exempt
def receiver(request: HttpRequest) -> JsonResponse | HttpResponseNotAllowed:
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    size = len(request.read(MAX_BYTES))
    logger.info(
        "demo receiver: delivery %s (%s bytes) arrived",
        request.headers.get("webhook-id", "without webhook-id")[:64],
        size,
    )
    return JsonResponse({"received": size})
