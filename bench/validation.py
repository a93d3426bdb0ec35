"""Validation cost of one import batch, every candidate for "declared bodies" in one run (docs/notes/declared.md).

Run: .venv/bin/python bench/validation.py [--rounds 15]  (no server or database needed).

The same 100-order batch (3 line items each, as the bounded parser hands it over: Decimal fractions, int whole
numbers), valid and with every tenth order broken, is checked order by order by:

* the nodes as an ``Obj`` tree (``IncomingOrder.node``, which the class builds from its fields: the baseline of
  the ratios);
* the declared body the import validates with (``orders.bodies.IncomingOrder``, built with ``core.declare``);
* pydantic v2 models (``bench/declared_candidates.py``): validation with the errors translated and the cleaned
  document dumped, and validation alone (the floor);
* msgspec Structs (the same module) by ``msgspec.convert`` of the parsed values;
* the nested DRF serializers below (which only check the shapes: no rules, codes or paths of ours).

Rounds are interleaved (each round runs every candidate, in a rotating order). Printed per candidate: the median
and the best sample, the median of the per-round ratios to the nodes (neighbours in time share the machine's
load) and the ratio of the best samples (what each costs when nothing else runs); on a shared, noisy machine
trust the two ratios, not the milliseconds, and look at several runs. Then the
same from the bytes (``core.jsonparse`` + nodes against ``msgspec.json.decode``), a checkout of 1,000 line items
(``ledger.bodies.checkouts.Checkout``, declared; its ratio to the hand-written tree it replaced is in
docs/notes/declared.md), and what the timings cannot show: does
each candidate find the nodes' errors (every error of an item, same paths and codes), keep every number exact,
and give drf-spectacular a request schema.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django
import msgspec

django.setup()

import drf_spectacular.contrib.pydantic  # noqa: E402, F401  (registers the pydantic extension)
from drf_spectacular.validation import validate_schema  # noqa: E402
from rest_framework import serializers  # noqa: E402

from bench import declared_candidates as candidates  # noqa: E402
from bench import declared_checkout  # noqa: E402
from core import jsonparse  # noqa: E402
from core.nodes import Report  # noqa: E402
from imports.bodies import IncomingOrdersRequest  # noqa: E402
from ledger.bodies.checkouts import Checkout, SaleReport  # noqa: E402
from orders.bodies import IncomingOrder  # noqa: E402
from tests.support.documents import DELETE, change_at  # noqa: E402
from tests.support.openapi import published  # noqa: E402

INCOMING_ORDER = IncomingOrder.node


class DiscountSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=255)
    type = serializers.ChoiceField(["amount", "amount_per_item", "percentage", "new_price", "new_price_per_item"])
    amount = serializers.DecimalField(max_digits=20, decimal_places=8, min_value=Decimal(0))


class LineItemSerializer(serializers.Serializer):
    product_identifier = serializers.CharField(max_length=255)
    variant_identifier = serializers.CharField(max_length=255, required=False)
    barcode = serializers.CharField(max_length=255, required=False)
    image_url = serializers.URLField(required=False)
    name = serializers.CharField(max_length=1000)
    quantity = serializers.IntegerField(min_value=1, max_value=1_000_000)
    price = serializers.DecimalField(max_digits=20, decimal_places=8, min_value=Decimal("0.00000001"))
    discounts = DiscountSerializer(many=True, required=False)


class BasketSerializer(serializers.Serializer):
    currency = serializers.CharField(max_length=3)
    line_items = LineItemSerializer(many=True, allow_empty=False)
    discounts = DiscountSerializer(many=True, required=False)


class CustomerSerializer(serializers.Serializer):
    customer_identifier = serializers.CharField(required=False)
    name = serializers.CharField(required=False)
    phone_number = serializers.CharField(required=False)
    email = serializers.CharField(required=False)


class PaymentSerializer(serializers.Serializer):
    reference = serializers.CharField()


class OrderSerializer(serializers.Serializer):
    order_identifier = serializers.CharField(max_length=255)
    basket = BasketSerializer()
    customer = CustomerSerializer(required=False)
    payment = PaymentSerializer(required=False)


# --- The batches -------------------------------------------------------------------------------------------


def as_parsed(value: Any) -> Any:
    """As the bounded parser hands a body over: fractions Decimal, whole numbers int."""
    return jsonparse.loads(json.dumps(value))


LINE = {
    "product_identifier": "1001",
    "variant_identifier": "1001-m",
    "barcode": "5701234567890",
    "image_url": "https://shop.example.com/1001.png",
    "name": "T-shirt",
    "quantity": 2,
    "price": 149.95,
    "discounts": [{"name": "Sale", "type": "percentage", "amount": 0.1}],
}


def valid_order(i: int) -> dict[str, Any]:
    return {
        "order_identifier": f"o-{i}",
        "basket": {"currency": "DKK", "line_items": [LINE, LINE, LINE], "discounts": []},
        "customer": {"customer_identifier": "c1", "name": "Jane", "email": "j@example.com"},
        "payment": {"reference": "psp-1"},
    }


def batch(n: int = 100) -> list[dict[str, Any]]:
    return as_parsed([valid_order(i) for i in range(n)])


ITEM = ["basket", "line_items", 0]

# Broken orders, after the cases of tests/imports/test_order_validation.py; several break more than one field.
FAULTS: list[tuple[str, list[tuple[list[Any], Any]]]] = [
    ("price 0 and quantity '2'", [([*ITEM, "price"], 0), ([*ITEM, "quantity"], "2")]),
    ("no name, no product_identifier", [([*ITEM, "name"], DELETE), ([*ITEM, "product_identifier"], DELETE)]),
    ("currency XYZ", [(["basket", "currency"], "XYZ")]),
    ("percentage discount of 1.5", [([*ITEM, "discounts", 0, "amount"], 1.5)]),
    (
        "per-item discount on the basket",
        [(["basket", "discounts"], [{"name": "d", "type": "amount_per_item", "amount": 1}])],
    ),
    ("shipping without payment", [(["payment"], DELETE), (["shipping"], {"method_id": "gls"})]),
    (
        "price '9.95', image img.png, quantity true",
        [([*ITEM, "price"], "9.95"), ([*ITEM, "image_url"], "img.png"), ([*ITEM, "quantity"], True)],
    ),
    ("no line items", [(["basket", "line_items"], [])]),
    ("blank order_identifier, customer a string", [(["order_identifier"], " "), (["customer"], "jane")]),
    ("price 1e13, quantity 1.5", [([*ITEM, "price"], 10**13), ([*ITEM, "quantity"], 1.5)]),
    (
        "second and third lines broken",
        [(["basket", "line_items", 1, "price"], -0.01), (["basket", "line_items", 2, "quantity"], 0)],
    ),
    ("discount without name, of a bogus type", [([*ITEM, "discounts"], [{"type": "bogus", "amount": 1}])]),
    ("basket an array", [(["basket"], [])]),
    ("method_title {} (paid)", [(["shipping"], {"method_title": {}})]),
    ("name null", [([*ITEM, "name"], None)]),
    ("unknown field only", [([*ITEM, "colour"], "red")]),
]


def broken(i: int, changes: list[tuple[list[Any], Any]]) -> dict[str, Any]:
    order = json.loads(json.dumps(valid_order(i)))  # not deepcopy: the three lines would stay one object
    for where, value in changes:
        change_at(order, where, value)
    return as_parsed(order)


def invalid_batch(n: int = 100) -> list[dict[str, Any]]:
    """Every tenth order broken (10%), each by a different fault."""
    orders = batch(n)
    for i in range(0, n, 10):
        orders[i] = broken(i, FAULTS[(i // 10) % len(FAULTS)][1])
    return orders


# --- The candidates: each checks one order and answers (cleaned or None, errors) ---------------------------


def nodes(order: Any) -> tuple[Any, list[dict[str, str]]]:
    report = Report()
    cleaned = INCOMING_ORDER.check(order, "", report)
    return (None if report.errors else cleaned), report.errors


def declared(order: Any) -> tuple[Any, list[dict[str, str]]]:
    report = Report()
    cleaned = IncomingOrder.check(order, "", report)
    return (None if report.errors else cleaned), report.errors


def pydantic(order: Any) -> tuple[Any, list[dict[str, str]]]:
    cleaned, errors, _warnings = candidates.pydantic_check(order)
    return cleaned, errors


def drf(order: Any) -> tuple[Any, list[dict[str, str]]]:
    serializer = OrderSerializer(data=order)
    if serializer.is_valid():
        return serializer.validated_data, []
    return None, [{"field": "", "message": str(serializer.errors), "code": "invalid"}]


CANDIDATES: dict[str, Callable[[Any], Any]] = {
    "nodes (the Obj tree, IncomingOrder.node)": nodes,
    "declared nodes (orders.bodies.IncomingOrder)": declared,
    "pydantic 2: validate+errors+dump": pydantic,
    "pydantic 2: validate only": candidates.pydantic_validate_only,
    "msgspec: convert+to_builtins": candidates.msgspec_check,
    "DRF serializers": drf,
}
BASE = "nodes (the Obj tree, IncomingOrder.node)"


def calibrate(run: Callable[[], Any], floor: float = 0.02) -> int:
    """Repeats per sample so that one sample lasts about ``floor`` seconds: long enough for the timer, short
    enough that a burst of another process's work spoils few samples."""
    start = time.perf_counter()
    run()
    once = time.perf_counter() - start
    return max(1, round(floor / max(once, 1e-6)))


Timing = tuple[float, float, float, float]  # median s, best s, median of the per-round ratios, ratio of the bests


def interleaved(runs: dict[str, Callable[[], Any]], rounds: int, base: str) -> dict[str, Timing]:
    """Each round runs every candidate once, in an order that rotates from round to round."""
    repeats = {name: calibrate(run) for name, run in runs.items()}
    samples: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            run, k = runs[name], repeats[name]
            start = time.perf_counter()
            for _ in range(k):
                run()
            samples[name].append((time.perf_counter() - start) / k)
    return {
        name: (
            statistics.median(samples[name]),
            min(samples[name]),
            statistics.median(s / b for s, b in zip(samples[name], samples[base], strict=True)),
            min(samples[name]) / min(samples[base]),
        )
        for name in names
    }


def over(check: Callable[[Any], Any], orders: list[Any]) -> Callable[[], None]:
    def run() -> None:
        for order in orders:
            check(order)

    return run


# --- What the timings cannot show ----------------------------------------------------------------------------


def error_set(errors: list[dict[str, str]]) -> set[tuple[str, str]]:
    return {(e["field"], e["code"]) for e in errors}


def conformance() -> None:
    print("\nErrors of the broken orders, against the nodes' (field path, code) pairs:")
    checks = {
        "declared nodes": declared,
        "pydantic 2": pydantic,
        "msgspec convert": candidates.msgspec_check,
    }
    expected = {name: nodes(broken(0, changes))[1] for name, changes in FAULTS}
    total = sum(len(errors) for errors in expected.values())
    print(f"  {len(FAULTS)} broken orders, {total} errors found by the nodes")
    for label, check in checks.items():
        same = found = messages = 0
        differing = []
        for name, changes in FAULTS:
            errors = check(broken(0, changes))[1]
            want = expected[name]
            found += len(error_set(errors) & error_set(want))
            messages += len({(e["field"], e["message"]) for e in errors} & {(e["field"], e["message"]) for e in want})
            if error_set(errors) == error_set(want):
                same += 1
            else:
                differing.append(name)
        print(
            f"  {label:<16} same errors on {same:2}/{len(FAULTS)} orders; {found:2}/{total} of the errors "
            f"(same message: {messages:2})" + (f"; differs on: {', '.join(differing)}" if differing else "")
        )


def floats_in(value: Any) -> int:
    if isinstance(value, float):
        return 1
    if isinstance(value, dict):
        return sum(floats_in(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(floats_in(v) for v in value)
    return 0


def posted(price: str) -> str:
    line = f'{{"product_identifier": "1", "name": "x", "quantity": 1, "price": {price}}}'
    return f'{{"order_identifier": "o", "basket": {{"currency": "DKK", "line_items": [{line}]}}}}'


def exactness() -> None:
    """Each price literal through each candidate: the cleaned price must be the parsed one, same type, same digits."""
    literals = ["0.1", "1e-7", "149.95", "2", "1E+2", "0.30000000000000004"]
    print(f"\nNumbers kept exact: the price {', '.join(literals)} posted, then read in the cleaned document:")
    rows: dict[str, Callable[[str], Any]] = {
        "nodes": lambda raw: nodes(jsonparse.loads(raw))[0],
        "declared nodes": lambda raw: declared(jsonparse.loads(raw))[0],
        "pydantic 2": lambda raw: pydantic(jsonparse.loads(raw))[0],
        "msgspec convert": lambda raw: candidates.msgspec_check(jsonparse.loads(raw))[0],
        "msgspec decode (bytes)": lambda raw: candidates.msgspec_check_bytes(f'{{"orders": [{raw}]}}'.encode())[0][0],
        "DRF serializers": lambda raw: drf(jsonparse.loads(raw))[0],
    }
    for label, run in rows.items():
        changed = []
        for literal in literals:
            expected = jsonparse.loads(literal)
            cleaned = run(posted(literal))
            price = cleaned["basket"]["line_items"][0]["price"] if cleaned else "refused"
            if type(price) is not type(expected) or str(price) != str(expected):
                changed.append(f"{literal} -> {price!r}")
        print(f"  {label:<24} {len(literals) - len(changed)}/{len(literals)} exact" + "; ".join(["", *changed]))
    valid = batch()
    counts = {
        label: sum(floats_in(check(order)[0]) for order in valid)
        for label, check in (
            ("nodes", nodes),
            ("declared nodes", declared),
            ("pydantic 2", pydantic),
            ("msgspec", candidates.msgspec_check),
        )
    }
    print("  floats in the 100 cleaned documents: " + ", ".join(f"{k} {v}" for k, v in counts.items()))


def schemas() -> None:
    print("\nRequest schema published by drf-spectacular (OpenAPI 3.0.3) for extend_schema(request=...):")
    for label, request in (
        ("declared nodes: IncomingOrdersRequest", IncomingOrdersRequest),
        ("pydantic 2 (contrib): IncomingOrder", candidates.IncomingOrder),
        ("DRF serializers: OrderSerializer", OrderSerializer),
    ):
        schema = published(request, "bench/orders")
        components = schema.get("components", {}).get("schemas", {})
        properties = sum(len(c.get("properties", {})) for c in components.values())
        try:
            validate_schema(schema)
            verdict = "a valid document"
        except Exception as exc:  # jsonschema's ValidationError: the first rule the document breaks
            verdict = "INVALID: " + str(exc).splitlines()[0][:70]
        names = ", ".join(sorted(components)[:4])
        print(f"  {label:<38} {len(components):2} components ({names}, ...), {properties:2} properties; {verdict}")
    _refs, components = msgspec.json.schema_components(
        [candidates.IncomingOrderStruct], ref_template="#/components/schemas/{name}"
    )
    price = components["LineItemStruct"]["properties"]["price"]
    print(
        f"  {'msgspec: json.schema_components':<38} {len(components):2} components, JSON Schema 2020-12 (null in "
        f"anyOf), no drf-spectacular extension; price {json.dumps(price)}"
    )


# --- Main --------------------------------------------------------------------------------------------------


def table(title: str, results: dict[str, Timing], base: str) -> None:
    print(f"{title}\n  {'ratios to: ' + base:<38} {'median':>9} {'best':>9} {'ratio':>8} {'of bests':>8}")
    for name, (median, best, ratio, best_ratio) in results.items():
        print(f"  {name:<38} {median * 1000:6.2f} ms {best * 1000:6.2f} ms {ratio:7.2f}x {best_ratio:7.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=25, help="interleaved rounds (default 25)")
    rounds = parser.parse_args().rounds

    valid, invalid = batch(), invalid_batch()
    for label, orders in (("valid", valid), ("10% invalid", invalid)):
        results = interleaved({name: over(check, orders) for name, check in CANDIDATES.items()}, rounds, BASE)
        table(f"\n100 orders x 3 line items, {label}: per batch, {rounds} interleaved rounds", results, BASE)

    raw = json.dumps({"orders": json.loads(json.dumps([valid_order(i) for i in range(100)]))}).encode()
    bytes_runs = {
        "jsonparse.parse + nodes": lambda: [nodes(o) for o in jsonparse.parse(raw).value["orders"]],
        "jsonparse.parse + declared nodes": lambda: [declared(o) for o in jsonparse.parse(raw).value["orders"]],
        "jsonparse.parse alone": lambda: jsonparse.parse(raw),
        "msgspec.json.decode (Raw per item)": lambda: candidates.msgspec_check_bytes(raw),
    }
    table(
        f"\nThe same valid batch from its {len(raw):,} bytes: {rounds} interleaved rounds",
        interleaved(bytes_runs, rounds, "jsonparse.parse + nodes"),
        "jsonparse.parse + nodes",
    )

    body = declared_checkout.large_checkout()

    def checkout_declared() -> None:
        report = SaleReport(currency="DKK")
        Checkout.check(body, "", report)
        assert not report.errors, report.errors[:3]

    table(
        f"\nA checkout of 1,000 line items (ledger.bodies.checkouts.Checkout): {rounds} rounds",
        interleaved({"declared Checkout": checkout_declared}, rounds, "declared Checkout"),
        "declared Checkout",
    )

    conformance()
    exactness()
    schemas()


if __name__ == "__main__":
    main()
