"""The REST framework's JSON parser for the back-office API. The body was bounded and parsed once already, by
``core.middleware.BoundedRequestMiddleware``; this hands DRF that result. Its own module, because DRF imports
its parsers while ``rest_framework.views`` is still being imported."""

from __future__ import annotations

from typing import Any

from rest_framework.parsers import BaseParser

from core import jsonparse
from core.middleware import parsed_body


class BoundedJSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        request = (parser_context or {}).get("request")
        parsed = parsed_body(request._request) if request is not None else None
        if parsed is None:
            return {}
        jsonparse.refuse(parsed.problems)
        return parsed.value
