"""docs/api.md and docs/pos.md cannot drift from the routes: every path of the OpenAPI document (which
drf-spectacular builds from the URL router) is documented, with its methods, lookup, extra actions and list filters,
and nothing documented is missing from the router."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.django_db

DOCS = Path(__file__).resolve().parents[2] / "docs"
PREFIX = "/api/v1/"
NOT_FILTERS = {"account", "integration", "limit", "offset"}  # authentication and pagination, documented once
VERBS = ("list", "create", "retrieve", "update", "delete")


def without_asides(text: str) -> str:
    """The text without its parenthesised remarks (nested ones included)."""
    while True:
        stripped = re.sub(r"\([^()]*\)", "", text)
        if stripped == text:
            return text
        text = stripped


def documented_rows() -> dict[str, tuple[str, str, str]]:
    """docs/api.md's table: resource -> (methods, lookup, filters)."""
    rows = {}
    for line in (DOCS / "api.md").read_text().splitlines():
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        found = re.fullmatch(r"`([a-z-]+)/`", cells[0]) if len(cells) == 4 else None
        if found:
            rows[found[1]] = (cells[1], cells[2], cells[3])
    return rows


def routes(document: dict) -> dict[str, dict[str, set[str]]]:
    """Back-office resources -> {"collection" | "detail" | "<action>" | "{lookup}/<action>": methods}, and the
    lookup's name under "lookup"."""
    found: dict[str, dict[str, set[str]]] = {}
    for path, operations in document["paths"].items():
        if not path.startswith(PREFIX) or path.startswith(PREFIX + "pos/"):
            continue
        resource, *rest = path[len(PREFIX) :].strip("/").split("/")
        methods = {m for m in operations if m in ("get", "post", "put", "patch", "delete")}
        entry = found.setdefault(resource, {})
        if not rest:
            entry["collection"] = methods
        elif len(rest) == 1 and rest[0].startswith("{"):
            entry["detail"] = methods
            entry["lookup"] = {rest[0].strip("{}")}
        elif len(rest) == 1:
            entry[rest[0]] = methods
        else:
            entry["{id}/" + rest[1]] = methods
    return found


def verbs_of(entry: dict[str, set[str]]) -> set[str]:
    collection, detail = entry.get("collection", set()), entry.get("detail", set())
    return {
        verb
        for verb, present in (
            ("list", "get" in collection),
            ("create", "post" in collection),
            ("retrieve", "get" in detail),
            ("update", bool({"put", "patch"} & detail)),
            ("delete", "delete" in detail),
        )
        if present
    }


def list_filters(document: dict, resource: str) -> set[str]:
    operation = document["paths"][f"{PREFIX}{resource}/"]["get"]
    return {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"} - NOT_FILTERS


def test_every_back_office_route_is_in_the_table_and_nothing_else(openapi_document: dict) -> None:
    assert set(documented_rows()) == set(routes(openapi_document))


def test_each_row_names_the_routes_methods_lookup_and_actions(openapi_document: dict) -> None:
    rows = documented_rows()
    wrong = []
    for resource, entry in routes(openapi_document).items():
        methods, lookup, _ = rows[resource]
        said = set(re.findall(r"\b(" + "|".join(VERBS) + r")\b", without_asides(methods)))
        if said != verbs_of(entry):
            wrong.append(f"{resource}: documented {sorted(said)}, routed {sorted(verbs_of(entry))}")
        named = re.match(r"`([a-z_]+)`", lookup)
        if named is None or {named[1]} != entry.get("lookup"):
            wrong.append(f"{resource}: lookup documented {lookup!r}, routed {entry.get('lookup')}")
        for action in sorted(set(entry) - {"collection", "detail", "lookup"}):
            for method in sorted(entry[action]):
                if f"`{method.upper()} {action}" not in methods:
                    wrong.append(f"{resource}: action {method.upper()} {action} not documented")
    assert wrong == []


def test_each_row_lists_the_list_filters_the_route_takes(openapi_document: dict) -> None:
    rows = documented_rows()
    wrong = []
    for resource, entry in routes(openapi_document).items():
        if "get" not in entry.get("collection", set()):
            continue
        cell = without_asides(rows[resource][2])
        documented = set(re.findall(r"`([a-z_]+)`", cell)) - NOT_FILTERS
        inherited = re.match(r"as ([a-z-]+)", cell)
        if inherited:
            documented |= list_filters(openapi_document, inherited[1])
        taken = list_filters(openapi_document, resource)
        if documented != taken:
            wrong.append(f"{resource}: documented {sorted(documented)}, taken {sorted(taken)}")
    assert wrong == []


def test_every_pos_route_is_in_the_pos_reference(openapi_document: dict) -> None:
    text = (DOCS / "pos.md").read_text()
    paths = [p for p in openapi_document["paths"] if p.startswith(PREFIX + "pos/")]
    assert len(paths) >= 15
    missing = [p for p in paths if f"`{p.rstrip('/')}" not in text]
    assert missing == []
