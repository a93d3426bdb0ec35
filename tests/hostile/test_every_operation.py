"""Hostile input against every operation of the OpenAPI schema: each class is a 4xx JSON answer.

For every operation, with real identifiers in its path (``tests/support/world.py``) so requests reach past the
404s, and the key of the scope the path needs:

* bodies (POST, PUT, PATCH, DELETE): huge exponents, overflowing decimals, over-long integers, lone surrogates
  in values and keys, NUL characters, deep nesting (past the parser and past the walk), huge arrays and objects,
  invalid UTF-8, wrong content types, oversized bodies;
* path parameters: over-long ids, ids past the 64-bit range, NUL characters;
* query parameters (every declared one and the pagination ones): NUL characters and over-long values; more than
  ``DATA_UPLOAD_MAX_NUMBER_FIELDS`` of them.

Each answer is a 4xx with the documented body ``{"status": "ERROR", "message", ...}`` (an import batch answers
its item failures in ``failed``); none is a 5xx, an HTML page or a success. Nothing here measures time: that the
costly conversions never run is proven in ``test_reproductions.py``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from django.conf import settings
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from tests.support.world import World, build_world

BODY_METHODS = ("post", "put", "patch", "delete")


def _operations() -> list[tuple[str, str, list[str], list[str]]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    out = []
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method not in ("get", *BODY_METHODS):
                continue
            parameters = operation.get("parameters", [])
            path_names = [p["name"] for p in parameters if p["in"] == "path"]
            query_names = [p["name"] for p in parameters if p["in"] == "query"]
            out.append((method, path, path_names, query_names))
    return out


OPERATIONS = _operations()
WITH_BODY = [op for op in OPERATIONS if op[0] in BODY_METHODS]
WITH_PATH = [op for op in OPERATIONS if op[2]]


def _id(op: tuple[str, str, list[str], list[str]]) -> str:
    return f"{op[0].upper()} {op[1]}"


def _deep(levels: int) -> bytes:
    return b'{"a": ' + b"[" * levels + b"]" * levels + b"}"


# name -> raw body. Each is valid JSON syntax (but for the invalid-UTF-8 one): the parser must refuse the value.
HOSTILE_BODIES: dict[str, bytes] = {
    "huge exponent": b'{"x": 1E+1000000}',
    "overflowing decimal": b'{"x": 1e999999999}',
    "tiny decimal": b'{"x": -1E-999999999}',
    "zero with a huge exponent": b'{"x": 0E+999999999}',
    "a 5000-digit integer": b'{"x": ' + b"9" * 5000 + b"}",
    "a 5000-digit fraction": b'{"x": 0.' + b"1" * 5000 + b"}",
    "lone surrogate": b'{"x": "a\\ud800b"}',
    "lone surrogate in a key": b'{"\\udfff": 1}',
    "NUL character": b'{"x": "a\\u0000b"}',
    "nesting past the parser": b"[" * 100_000 + b"]" * 100_000,
    "nesting past the walk": _deep(40),
    "huge array": b'{"x": [' + b",".join([b"0"] * 150_000) + b"]}",
    "huge object": b"{" + b",".join(b'"k%d": 0' % i for i in range(12_000)) + b"}",
    "invalid UTF-8": b'{"x": "\xff\xfe"}',
    "hostile item in an array body": b'[{"x": 1E+1000000}]',
}

WRONG_CONTENT_TYPES = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/xml"]


@pytest.fixture
def world(db: None) -> World:
    return build_world()


def _url(
    world: World, method: str, path: str, names: list[str], *, values: dict[str, str] | None = None, **query: str
) -> str:
    filled = path
    for name, value in (values or world.path_parameters(path, names)).items():
        filled = filled.replace("{" + name + "}", value)
    return f"{filled}?{urlencode(world.query(path, **query))}"


def assert_refused(response: Any, *, statuses: range = range(400, 500)) -> dict[str, Any]:
    assert response.status_code in statuses, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/json"), response.content[:300]
    body = json.loads(response.content)
    assert body["status"] == "ERROR", body
    assert body["message"], body
    return body


def _send(client: Client, method: str, url: str, raw: bytes, content_type: str = "application/json") -> Any:
    return getattr(client, method)(url, raw, content_type=content_type)


@pytest.mark.parametrize("op", WITH_BODY, ids=_id)
def test_every_hostile_body_is_a_4xx_json_answer(world: World, op: tuple[str, str, list[str], list[str]]) -> None:
    method, path, names, _ = op
    client = Client()
    for name, raw in HOSTILE_BODIES.items():
        response = _send(client, method, _url(world, method, path, names), raw)
        body = assert_refused(response)
        failed = body.get("failed") or []
        errors = body.get("errors") or [e for item in failed for e in item["errors"]]
        assert errors, (name, body)
        assert all(e.get("field") is not None and e.get("code") for e in errors), (name, errors)


@pytest.mark.parametrize("op", WITH_BODY, ids=_id)
def test_a_body_of_another_content_type_is_a_415(world: World, op: tuple[str, str, list[str], list[str]]) -> None:
    method, path, names, _ = op
    client = Client()
    for content_type in WRONG_CONTENT_TYPES:
        response = _send(client, method, _url(world, method, path, names), b"x=1", content_type)
        body = assert_refused(response, statuses=range(415, 416))
        assert body["errors"][0]["field"] == "Content-Type"


class RecordingStream(io.BytesIO):
    """A request body that records whether anything read it."""

    def __init__(self) -> None:
        super().__init__(b"{}")
        self.reads = 0

    def read(self, size: int | None = -1) -> bytes:
        self.reads += 1
        return super().read(size)


@pytest.mark.parametrize("op", WITH_BODY, ids=_id)
def test_an_oversized_body_is_a_413_before_a_byte_is_read(
    world: World, op: tuple[str, str, list[str], list[str]]
) -> None:
    method, path, names, _ = op
    limit = settings.IMPORT_MAX_BODY_BYTES if path.startswith("/imports/") else settings.API_MAX_BODY_BYTES
    stream = RecordingStream()

    response = Client().generic(
        method.upper(),
        _url(world, method, path, names),
        CONTENT_TYPE="application/json",
        CONTENT_LENGTH=str(limit + 1),
        **{"wsgi.input": stream},
    )

    body = assert_refused(response, statuses=range(413, 414))
    assert body["errors"][0]["field"] == "body"
    assert stream.reads == 0


@pytest.mark.parametrize("op", WITH_PATH, ids=_id)
def test_hostile_path_ids_are_a_404(world: World, op: tuple[str, str, list[str], list[str]]) -> None:
    method, path, names, _ = op
    client = Client()
    # Past the URL bounds: a 404 before any view. Within them: the view's own answer (its validation may come
    # before the lookup), a 4xx either way.
    for hostile, statuses in (
        ("1" * 5000, range(404, 405)),
        ("x" * 256, range(404, 405)),
        ("1%00", range(404, 405)),
        ("9" * 19, range(400, 500)),
        ("9" * 40, range(400, 500)),
        ("%ED%A0%80", range(400, 500)),
    ):
        values = dict.fromkeys(names, hostile)
        raw = b'{"x": 1}' if method in BODY_METHODS else b""
        response = _send(client, method, _url(world, method, path, names, values=values), raw)
        assert_refused(response, statuses=statuses)


@pytest.mark.parametrize("op", OPERATIONS, ids=_id)
def test_hostile_query_parameters_are_a_400(world: World, op: tuple[str, str, list[str], list[str]]) -> None:
    method, path, names, query_names = op
    client = Client()
    names_to_try = {*query_names, "limit", "offset", "stock_location", "markets"} - {"account", "integration", "apikey"}
    for name in sorted(names_to_try):
        for hostile in ("a\x00b", "x" * 5000):
            url = _url(world, method, path, names, **{name: hostile})
            raw = b'{"x": 1}' if method in BODY_METHODS else b""
            body = assert_refused(_send(client, method, url, raw), statuses=range(400, 401))
            assert body["errors"][0]["field"] == name


@pytest.mark.parametrize("op", OPERATIONS, ids=_id)
def test_a_query_of_more_than_1000_fields_is_a_json_400(
    world: World, op: tuple[str, str, list[str], list[str]]
) -> None:
    method, path, names, _ = op
    url = _url(world, method, path, names) + "&" + "&".join(f"f{i}=1" for i in range(1001))
    raw = b'{"x": 1}' if method in BODY_METHODS else b""

    body = assert_refused(_send(Client(), method, url, raw), statuses=range(400, 401))

    assert (body["errors"][0]["field"], body["errors"][0]["code"]) == ("query", "too_many_fields")


def hostile_pagination() -> Iterator[tuple[str, str]]:
    for name in ("limit", "offset"):
        for value in ("1e999999", "99999999999999999999999", "-1", "1.5", "9" * 400):
            yield name, value


@pytest.mark.parametrize(
    "op", [op for op in OPERATIONS if op[0] == "get" and {"limit", "offset"} <= set(op[3])], ids=_id
)
def test_hostile_pagination_is_a_400(world: World, op: tuple[str, str, list[str], list[str]]) -> None:
    method, path, names, _ = op
    client = Client()
    for name, value in hostile_pagination():
        body = assert_refused(client.get(_url(world, method, path, names, **{name: value})), statuses=range(400, 401))
        assert body["errors"][0]["field"] == name
