"""A daily CSV of 100,000 sales over FTP, beside a plain csv.writer doing the same job, in one run.

    .venv/bin/python bench/export_csv.py [--sizes 10000,100000]

For each size it stores that many sales (a fresh account each run, against ``DATABASE_URL``, default
PostgreSQL ``retail_bench``), puts them into a daily CSV queue delivering to a local FTP server (pyftpdlib in
a process of its own), and then, each in a fresh child process:

* ``export``: the export pipeline sends the cron window (``exports.services.deliver``: lease, items read
  in pages, CSV rendered into a spooled temporary file, uploaded, every item's outcome recorded);
* ``plain``: ``csv.writer`` over the same sales read with a chunked iterator, into a temporary file, uploaded
  with ``ftplib``: the least any exporter has to do.

It prints wall time and peak RSS above an idle Django process for both, and the time ratio. Target:
memory stays flat as the batch grows (compare the sizes), and the pipeline's time is a small multiple of plain.
"""

from __future__ import annotations

import argparse
import csv
import ftplib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness

FTP_USER, FTP_PASSWORD = "bench", "bench-password"
COLUMNS = [
    {"header": "Sale", "path": "identifier"},
    {"header": "Date", "path": "timing.timestamp", "format": "date:%Y-%m-%d %H:%M"},
    {"header": "Shop", "path": "source.shop_id"},
    {"header": "Register", "path": "source.register_id"},
    {"header": "Total", "path": "summary.total", "format": "money"},
    {"header": "VAT", "path": "summary.vat_amount", "format": "money"},
]
FTP_SERVER = """
import logging, sys
from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler
from pyftpdlib.servers import FTPServer
logging.getLogger("pyftpdlib").setLevel(logging.WARNING)
authorizer = DummyAuthorizer()
authorizer.add_user(sys.argv[1], sys.argv[2], sys.argv[3], perm="elradfmwMT")
FTPHandler.authorizer = authorizer
server = FTPServer(("127.0.0.1", 0), FTPHandler)
print(server.socket.getsockname()[1], flush=True)
server.serve_forever()
"""


def sale_document(n: int, at: float) -> dict[str, Any]:
    lines = [
        {
            "line_item_id": f"l{i}",
            "id": f"product-{(n * 3 + i) % 500}",
            "name": f"Product {(n * 3 + i) % 500}",
            "product_group": ["shirts", "shoes", "bags"][i],
            "quantity": 1,
            "retail_price": Decimal("99.95"),
            "base_price": Decimal("99.95"),
            "sub_total": Decimal("99.95"),
            "total": Decimal("99.95"),
            "vat_amount": Decimal("19.99"),
            "sales_tax_amount": 0,
            "total_tax_amount": Decimal("19.99"),
            "taxes": [{"amount": Decimal("19.99"), "rate": Decimal("0.25"), "name": "VAT", "type": "vat"}],
        }
        for i in range(3)
    ]
    return {
        "base_currency_code": "DKK",
        "identifier": f"sale-{n}",
        "checkout_identifier": f"checkout-{n}",
        "sequence_number": n,
        "voided": False,
        "source": {"market_id": "dk", "shop_id": "shop-1", "register_id": "reg-1", "cashier_id": "c1"},
        "timing": {"timestamp": at, "timezone": "Europe/Copenhagen"},
        "payments": [
            {"identifier": "p1", "payment_type": "card.external", "amount": Decimal("299.85"), "success": True}
        ],
        "summary": {
            "is_return": False,
            "base_price": Decimal("299.85"),
            "sub_total": Decimal("299.85"),
            "total": Decimal("299.85"),
            "total_discounts": 0,
            "vat_amount": Decimal("59.97"),
            "sales_tax_amount": 0,
            "total_tax_amount": Decimal("59.97"),
            "taxes": [{"amount": Decimal("59.97"), "rate": Decimal("0.25"), "name": "VAT", "type": "vat"}],
            "line_items": lines,
        },
    }


def store_sales(size: int, ftp_port: int, run_id: str) -> tuple[str, int]:
    """A fresh account with ``size`` sales in a daily CSV queue; returns (account identifier, delivery pk)."""
    from django.db import transaction

    from accounts.models import Account, Market, Register, StockLocation
    from exports import services as export_services
    from exports.models import ExportItem, ExportQueue
    from exports.services import enqueueing
    from ledger.models import Checkout, RegisterPeriod, Sale, SaleKind

    now = datetime.now(UTC)
    account = Account.objects.create(identifier=f"bench-csv-{run_id}-{size}", timezone="Europe/Copenhagen")
    market = Market.objects.create(account=account, identifier="dk", currency="DKK")
    shop = StockLocation.objects.create(account=account, identifier="shop-1", market=market)
    register = Register.objects.create(account=account, identifier="reg-1", stock_location=shop)
    period = RegisterPeriod.objects.create(account=account, register=register, sequence_number=1, opened_at=now)
    queue = ExportQueue.objects.create(
        account=account,
        name="daily sales CSV",
        entity_type="sales",
        trigger="daily",
        transform={"type": "csv", "rows": "entity", "columns": COLUMNS, "timezone": "Europe/Copenhagen"},
        delivery={
            "type": "ftp",
            "host": "127.0.0.1",
            "port": ftp_port,
            "username": FTP_USER,
            "password": FTP_PASSWORD,
            "path": "sales/{date}/{delivery_id}.{ext}",
        },
    )
    # What the checkout and every sale of the run have in common: the till they were booked at, and when.
    booked = {"account": account, "register": register, "stock_location": shop, "period": period, "timestamp": now}
    checkout = Checkout.objects.create(identifier="bench", body_hash="-", document={}, **booked)
    step = 5000
    for start in range(0, size, step):
        with transaction.atomic():
            sales = Sale.objects.bulk_create(
                [
                    Sale(
                        checkout=checkout,
                        identifier=f"sale-{n}",
                        sequence_number=n,
                        kind=SaleKind.SALE,
                        base_currency_code="DKK",
                        total=Decimal("299.85"),
                        document=sale_document(n, now.timestamp() - n),
                        **booked,
                    )
                    for n in range(start, min(size, start + step))
                ]
            )
            ExportItem.objects.bulk_create(
                [
                    ExportItem(
                        account=account, queue=queue, entity_type="sales", object_id=s.pk, element_key=s.identifier
                    )
                    for s in sales
                ]
            )
    enqueueing.hand_off = lambda *args, **kwargs: None  # type: ignore[assignment]  # no worker here
    assert export_services.run_cron(now=datetime.now(UTC)) >= 1
    delivery = queue.deliveries.get()
    return account.identifier, delivery.pk


def remove_account(identifier: str) -> None:
    """Everything the run stored, with plain DELETEs (the ORM's delete() would load every row to cascade)."""
    from django.db import connection, transaction

    from accounts.models import Account

    account_id = Account.objects.get(identifier=identifier).pk
    tables = [
        "exports_exportattempt",
        "exports_exportitem",
        "exports_exportdelivery",
        "exports_exportqueue",
        "ledger_sale",
        "ledger_checkout",
        "ledger_registerperiod",
        "accounts_register",
        "accounts_stocklocation",
        "accounts_market",
    ]
    with transaction.atomic(), connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"DELETE FROM {table} WHERE account_id = %s", [account_id])  # noqa: S608  # fixed names
        cursor.execute("DELETE FROM accounts_account WHERE id = %s", [account_id])


def peak_rss_kb() -> int:
    """This process's peak resident memory (VmHWM; ``ru_maxrss`` would start from the parent's after fork)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def child(mode: str, delivery_pk: int, account_identifier: str, ftp_port: int) -> None:
    """Runs in a fresh process: prints {"seconds", "rss_kb", "base_kb"} as JSON."""
    import django

    django.setup()
    from django.db import connection

    from exports import services as export_services
    from exports.models import ExportStatus
    from ledger.models import Sale

    connection.ensure_connection()
    base_kb = peak_rss_kb()
    started = time.perf_counter()
    if mode == "export":
        outcome = export_services.deliver(delivery_pk=delivery_pk)
        assert outcome == ExportStatus.SUCCESS, outcome
    else:
        rows = Sale.objects.filter(account__identifier=account_identifier).order_by("pk").values_list("document")
        with tempfile.TemporaryFile() as raw:
            text = open(raw.fileno(), "w", encoding="utf-8", newline="", closefd=False)  # noqa: SIM115
            writer = csv.writer(text, delimiter=";")
            writer.writerow([c["header"] for c in COLUMNS])
            for (doc,) in rows.iterator(chunk_size=1000):
                at = datetime.fromtimestamp(float(doc["timing"]["timestamp"]), UTC)
                summary = doc["summary"]
                writer.writerow(
                    [
                        doc["identifier"],
                        at.strftime("%Y-%m-%d %H:%M"),
                        doc["source"]["shop_id"],
                        doc["source"]["register_id"],
                        f"{Decimal(str(summary['total'])):.2f}".replace(".", ","),
                        f"{Decimal(str(summary['vat_amount'])):.2f}".replace(".", ","),
                    ]
                )
            text.flush()
            raw.seek(0)
            client = ftplib.FTP()  # noqa: S321  # the local bench server
            client.connect("127.0.0.1", ftp_port)
            client.login(FTP_USER, FTP_PASSWORD)
            client.storbinary(f"STOR plain-{uuid.uuid4().hex}.csv", raw, blocksize=256 * 1024)
            client.quit()
    seconds = time.perf_counter() - started
    rss_kb = peak_rss_kb()
    print(json.dumps({"seconds": seconds, "rss_kb": rss_kb, "base_kb": base_kb}))


def run_child(env: dict[str, str], mode: str, delivery_pk: int, account: str, port: int) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(delivery_pk), account, str(port)],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"the {mode} child failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated numbers of sales")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, delivery_pk, account, port = args.child
        child(mode, int(delivery_pk), account, int(port))
        return 0

    run_id = harness.new_run_id()
    env = harness.django_env(OUTBOUND_ALLOWED_NETWORKS="127.0.0.1/32", LOG_LEVEL=os.environ.get("LOG_LEVEL", "WARNING"))
    harness.setup_django(env)
    ftp_root = Path(tempfile.mkdtemp(prefix="bench-csv-ftp-"))
    server = subprocess.Popen(
        [sys.executable, "-c", FTP_SERVER, FTP_USER, FTP_PASSWORD, str(ftp_root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        print(f"database {harness.redacted(env['DATABASE_URL'])}, FTP server on 127.0.0.1:{port}")
        print("| sales | export s | plain s | export/plain | export peak RSS MB | plain peak RSS MB | file MB |")
        print("|---|---|---|---|---|---|---|")
        for size in (int(s) for s in args.sizes.split(",")):
            account, delivery_pk = store_sales(size, port, run_id)
            harness.vacuum_analyze(env["DATABASE_URL"])
            export = run_child(env, "export", delivery_pk, account, port)
            plain = run_child(env, "plain", delivery_pk, account, port)
            [uploaded] = (ftp_root / "sales").rglob("*.csv")
            lines = uploaded.read_bytes().count(b"\n")
            assert lines == size + 1, (lines, size)
            megabytes = uploaded.stat().st_size / 1e6
            uploaded.unlink()
            remove_account(account)

            def rss(result: dict[str, float]) -> float:
                return (result["rss_kb"] - result["base_kb"]) / 1024

            print(
                f"| {size:,} | {export['seconds']:.2f} | {plain['seconds']:.2f} | "
                f"{export['seconds'] / plain['seconds']:.2f} | {rss(export):.1f} | {rss(plain):.1f} | {megabytes:.1f} |"
            )
    finally:
        server.terminate()
        server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
