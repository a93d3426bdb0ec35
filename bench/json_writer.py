"""Cost of the transforms' bounded JSON writer (``exports.transforms.common.write_json``) beside ``dumps``.

Run: .venv/bin/python bench/json_writer.py [--rounds 31] [--against REV]  (no server or database needed).

``write_json`` writes what ``dumps`` (the json module's encoder, Decimals exact) writes, piece by piece within a
render budget, so that a large value is refused while it is written. Measured on: 200 sale documents of 20 line
items each as they are stored (fractions ``Decimal``, whole numbers ``int``), the same documents with plain JSON
numbers, and an array of 100,000 scalars (the case an array's loop is worst at). ``--against REV`` measures the
writer of that git revision in the same run (``git show REV:exports/transforms/common.py``), to compare two
versions of the loop.

Rounds are interleaved (each round runs every candidate, in a rotating order) and timed in process CPU time, as
other processes share the machine. Printed per candidate and input: the median and the best sample, and the
median of the per-round ratios to this tree's ``write_json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from exports.transforms import common  # noqa: E402


def sale_document(number: int) -> dict[str, Any]:
    line_items = [
        {
            "id": f"line-{i}",
            "product_id": f"product-{i}",
            "name": "Blå T-shirt",
            "quantity": 2,
            "retail_price": Decimal("99.95"),
            "base_price": Decimal("199.90"),
            "sub_total": Decimal("179.91"),
            "total": Decimal("179.91"),
            "barcode": None,
            "ecom_id": None,
            "taxes": [{"name": "VAT", "rate": Decimal("0.25"), "type": "vat", "amount": Decimal("35.98")}],
        }
        for i in range(20)
    ]
    return {
        "identifier": f"sale-{number}",
        "sequence_number": number,
        "voided": False,
        "base_currency_code": "DKK",
        "timestamp": "2026-11-25T10:00:00+01:00",
        "summary": {
            "total": Decimal("3598.20"),
            "total_tax_amount": Decimal("719.64"),
            "line_items": line_items,
            "payments": [{"payment_type": "cash", "amount": Decimal("3598.20"), "success": True}],
        },
        "source": {"market_id": "dk", "shop_id": "shop-1", "register_id": "register-1", "cashier_id": "AB"},
    }


def inputs() -> dict[str, Any]:
    documents = [sale_document(n) for n in range(200)]
    return {
        "documents": documents,
        "plain numbers": json.loads(common.dumps(documents)),
        "scalar array": [n if n % 2 else f"s{n}" for n in range(100_000)],
    }


def writer_at(rev: str) -> Callable[..., None]:
    """``write_json`` as the revision ``rev`` has it, loaded beside this tree's (same apps, same settings)."""
    source = subprocess.run(
        ["git", "show", f"{rev}:exports/transforms/common.py"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    module = types.ModuleType(f"common_at_{rev}")
    exec(compile(source, f"{rev}:exports/transforms/common.py", "exec"), module.__dict__)  # noqa: S102
    return module.write_json  # type: ignore[no-any-return]


def with_writer(write_json: Callable[..., None]) -> Callable[[Any], str]:
    def run(value: Any) -> str:
        writer = common.BoundedWriter(common.RenderBudget(timeout=600, max_bytes=1 << 30))
        write_json(value, writer)
        return writer.text()

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--against", metavar="REV", help="also measure the writer of this git revision")
    args = parser.parse_args()

    candidates = {"write_json": with_writer(common.write_json), "dumps": common.dumps}
    if args.against:
        candidates[f"write_json at {args.against}"] = with_writer(writer_at(args.against))
    for name, value in inputs().items():
        expected = common.dumps(value)
        for candidate, run in candidates.items():
            assert run(value) == expected, f"{candidate} writes other JSON than dumps for {name}"
        samples: dict[str, list[float]] = {candidate: [] for candidate in candidates}
        order = list(candidates)
        for round_number in range(args.rounds):
            turn = round_number % len(order)
            for candidate in order[turn:] + order[:turn]:
                started = time.process_time()
                candidates[candidate](value)
                samples[candidate].append(time.process_time() - started)
        print(f"{name} ({len(expected) / 1e6:.1f} MB of JSON)")
        base = samples["write_json"]
        for candidate, times in samples.items():
            ratio = statistics.median(t / b for t, b in zip(times, base, strict=True))
            print(
                f"  {candidate:28} median {statistics.median(times) * 1000:7.1f} ms  best {min(times) * 1000:7.1f} ms"
                f"  ratio to write_json {ratio:5.2f}"
            )


if __name__ == "__main__":
    main()
