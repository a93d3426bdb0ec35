"""Amounts in the platform's meaning (docs/amounts.md), and the warnings stored with a checkout.

Before: a line's ``retail_price`` and ``cost_price`` were per unit, ``margin`` a ratio and ``margin_total`` the
profit amount. After: ``retail_price`` and ``cost_price`` are the line's (quantity x unit), ``margin`` is the profit
amount and ``margin_total`` the amount it is measured on (``sub_total - vat_amount``), so a period's cost is
``margin_total - margin``. Stored sale, checkout and statement documents and the statement rows are converted.
"""

from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

from django.db import migrations, models
from django.db.models import F

CENT = Decimal("0.01")
BATCH = 500


def _number(value: Any) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def _net(owner: dict[str, Any]) -> Decimal | None:
    if _number(owner.get("sub_total")) and _number(owner.get("vat_amount")):
        return Decimal(owner["sub_total"]) - Decimal(owner["vat_amount"])
    return None


def _margins(owner: dict[str, Any]) -> None:
    """Old ``margin`` (ratio) and ``margin_total`` (profit) -> ``margin`` (profit) and ``margin_total`` (net)."""
    has_total, has_ratio = _number(owner.get("margin_total")), _number(owner.get("margin"))
    net = _net(owner)
    if net is None or not (has_total or has_ratio):
        return
    if has_total:
        profit = Decimal(owner["margin_total"])
    else:
        profit = (Decimal(owner["margin"]) * net).quantize(CENT)
    owner["margin"] = profit
    owner["margin_total"] = net


def convert_line(line: Any) -> None:
    """One ``summary.line_items[n]`` of the old shape, converted in place."""
    if not isinstance(line, dict):
        return
    quantity = line.get("quantity")
    if _number(quantity):
        for name in ("retail_price", "cost_price"):
            if _number(line.get(name)):
                line[name] = Decimal(line[name]) * Decimal(quantity)
    _margins(line)


def convert_summary(summary: Any) -> None:
    """A sale ``summary`` (or a checkout part's ``basket``) of the old shape, converted in place."""
    if not isinstance(summary, dict):
        return
    _margins(summary)
    lines = summary.get("line_items")
    for line in lines if isinstance(lines, list) else ():
        convert_line(line)


def convert_sale_document(document: Any) -> None:
    if isinstance(document, dict):
        convert_summary(document.get("summary"))


def convert_checkout_document(document: Any) -> None:
    parts = document.get("sales") if isinstance(document, dict) else None
    for part in parts if isinstance(parts, list) else ():
        if isinstance(part, dict):
            convert_summary(part.get("basket"))


def _sales_summary(summary: Any, expense_net: Decimal) -> None:
    # Old: margin_total summed the profits, and an expense line (no cost) added 0 to it. New: an expense line's
    # margin and margin_total are both its net amount (no cost), so the expenses' net joins the profit.
    if not isinstance(summary, dict) or not _number(summary.get("margin_total")):
        return
    net = _net(summary)
    if net is None:
        return
    summary["margin"] = Decimal(summary["margin_total"]) + expense_net
    summary["margin_total"] = net


def convert_statement_document(document: Any) -> None:
    """A register close statement's sales summaries: ``margin`` a ratio -> the profit amount."""
    summary = document.get("register_summary") if isinstance(document, dict) else None
    if not isinstance(summary, dict):
        return

    def net(part: Any) -> Decimal:
        value = _net(part) if isinstance(part, dict) else None
        return value if value is not None else Decimal(0)

    expenses = summary.get("expenses")
    all_by_group = summary.get("all_by_product_group")
    if isinstance(all_by_group, dict):
        sales_by_group = summary.get("sales_by_product_group") or {}
        returns_by_group = summary.get("returns_by_product_group") or {}
        for group, part in all_by_group.items():
            goods = net(sales_by_group.get(group)) + net(returns_by_group.get(group))
            _sales_summary(part, net(part) - goods)
    for name in ("sales_by_product_group", "returns_by_product_group"):
        groups = summary.get(name)
        for part in groups.values() if isinstance(groups, dict) else ():
            _sales_summary(part, Decimal(0))
    _sales_summary(summary.get("all"), net(expenses))
    _sales_summary(summary.get("sales"), Decimal(0))
    _sales_summary(summary.get("returns"), Decimal(0))
    _sales_summary(expenses, net(expenses))


def _convert_documents(model: Any, convert: Callable[[Any], None]) -> None:
    def batches() -> Iterator[list[Any]]:
        batch: list[Any] = []
        for row in model.objects.only("pk", "document").order_by("pk").iterator(chunk_size=BATCH):
            convert(row.document)
            batch.append(row)
            if len(batch) == BATCH:
                yield batch
                batch = []
        if batch:
            yield batch

    for batch in batches():
        model.objects.bulk_update(batch, ["document"])


def forwards(apps: Any, schema_editor: Any) -> None:
    SaleLine = apps.get_model("ledger", "SaleLine")
    # Old rows: margin_total was the profit (0 for an expense line, which has no cost).
    SaleLine.objects.exclude(kind="expense").update(margin=F("margin_total"))
    SaleLine.objects.filter(kind="expense").update(margin=F("sub_total") - F("vat_amount"))
    SaleLine.objects.update(margin_total=F("sub_total") - F("vat_amount"))
    _convert_documents(apps.get_model("ledger", "Sale"), convert_sale_document)
    _convert_documents(apps.get_model("ledger", "Checkout"), convert_checkout_document)
    _convert_documents(apps.get_model("ledger", "RegisterCloseStatement"), convert_statement_document)


class Migration(migrations.Migration):

    dependencies = [
        ('ledger', '0003_close_identifier'),
    ]

    operations = [
        migrations.AddField(
            model_name='checkout',
            name='warnings',
            field=models.JSONField(blank=True, default=list, help_text='What looked odd but was stored as sent: [{"field", "message", "code"}].'),
        ),
        migrations.AddField(
            model_name='sale',
            name='warnings',
            field=models.JSONField(blank=True, default=list, help_text="The checkout's warnings about this sale (paths from the checkout body)."),
        ),
        migrations.AddField(
            model_name='saleline',
            name='margin',
            field=models.DecimalField(decimal_places=6, default=0, help_text="The profit amount: margin_total - the line's cost, where a cost is known.", max_digits=20),
        ),
        migrations.AlterField(
            model_name='saleline',
            name='margin_total',
            field=models.DecimalField(decimal_places=6, default=0, help_text='The amount the margin is measured on: sub_total - vat_amount.', max_digits=20),
        ),
        # Not reversible: the old meaning of a converted document cannot be told from a new one.
        migrations.RunPython(forwards, migrations.RunPython.noop),
    ]
