"""Document entity types loaded whole or reduced to the values a transform reads (``load_paths``)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exports.entities.documents import outermost
from exports.entities.newsletter_signups import ENTITY as SIGNUPS
from exports.transforms.common import resolve
from ledger.models import NewsletterSignup
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

KEYS = st.sampled_from(["a", "b", "0", "x-y", "line_items"])
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=4)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.decimals(allow_nan=False, allow_infinity=False, places=2) | TEXT,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(KEYS, children, max_size=3),
    max_leaves=10,
)
PATHS = st.tuples(KEYS, st.lists(KEYS | st.integers(0, 3), max_size=3)).map(lambda parts: (parts[0], *parts[1]))


def store(tenant: Tenant, document: Any) -> int:
    return NewsletterSignup.objects.create(account=tenant.account, email="a@example.com", document=document).pk


def read_back(entity: dict[str, Any], path: tuple[str | int, ...]) -> str:
    # repr: a Decimal stays the Decimal it was (1.50 is not 1.5), an object keeps its keys' order
    return repr(resolve(entity, path))


DOCUMENTS = st.dictionaries(KEYS, VALUES, max_size=4) | VALUES.filter(lambda value: value is not None)  # NULL: no row


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(DOCUMENTS, min_size=1, max_size=3), st.lists(PATHS, max_size=6))
def test_each_path_finds_in_the_reduced_entity_what_it_finds_in_the_whole_one(
    tenant: Tenant, documents: list[Any], paths: list[tuple[str | int, ...]]
) -> None:
    ids = [store(tenant, document) for document in documents]

    whole, reduced = SIGNUPS.load(ids), SIGNUPS.load_paths(ids, paths)  # type: ignore[misc]

    assert reduced.keys() == whole.keys()
    for pk in ids:
        assert [read_back(reduced[pk], path) for path in paths] == [read_back(whole[pk], path) for path in paths]


def test_only_the_values_at_the_paths_are_loaded_and_followed_strictly(tenant: Tenant) -> None:
    document = {
        "summary": {"total": Decimal("12345678901234567.89"), "lines": [{"name": "a"}, {"name": "b"}], "0": "key"},
        "list": [1, 2],
        "nothing": None,
        "x-y": {"z": True, "other": 1},
        "unread": {"large": "x" * 1000},
    }
    pk = store(tenant, document)
    paths = [
        ("summary", "total"),
        ("summary", "lines", 1, "name"),
        ("summary", "lines", 5),  # past the end
        ("summary", 0),  # an index of an object
        ("list", "0"),  # a key of an array
        ("nothing",),
        ("missing", "deeper"),
        ("x-y", "z"),
        ("x-y",),  # holds ("x-y", "z")
    ]

    [entity] = SIGNUPS.load_paths([pk], paths).values()  # type: ignore[misc]

    assert entity == {
        "summary": {"total": Decimal("12345678901234567.89"), "lines": [None, {"name": "b"}]},
        "x-y": {"z": True, "other": 1},
    }


def test_a_row_that_is_gone_is_left_out(tenant: Tenant) -> None:
    pk = store(tenant, {"a": 1})

    assert SIGNUPS.load_paths([pk, pk + 1000], [("a",)]) == {pk: {"a": 1}}  # type: ignore[misc]


def test_outermost_keeps_the_paths_no_other_holds_in_their_order() -> None:
    assert outermost([("b", 0), ("a", "c"), ("a",), ("b", 0), ("a", "d", 1)]) == [("b", 0), ("a",)]
