"""The REST framework's JSON parser for the back-office API: the bounded parser (``core.jsonparse``) and the
``API_MAX_BODY_BYTES`` limit, the same as the POS API's. Its own module, because DRF imports its parsers while
``rest_framework.views`` is still being imported."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.parsers import BaseParser

from core import jsonparse
from core.errors import PayloadTooLarge


class BoundedJSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        limit = settings.API_MAX_BODY_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge(f"The body is larger than the limit of {limit} bytes", field="body")
        if not raw.strip():
            return {}
        return jsonparse.loads(raw)
