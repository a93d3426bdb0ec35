"""The baseline endpoint of ``bench/imports.py``: the HTTP and JSON cost of a request and nothing else.

Mounted at ``/bench/bare`` only when ``BENCH_BARE_ENDPOINT`` is true, which only the benchmark's own server sets.
"""

from __future__ import annotations

import json

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST


@csrf_exempt
@require_POST
def bare(request: HttpRequest) -> JsonResponse:
    json.loads(request.body)
    return JsonResponse({"status": "OK"})
