"""Payment parts by product group: a ``SalePayment`` row with a ``product_group`` is the part of a sale's payment
attributed to that group, which a statement's summaries by product group sum (docs/decisions.md). The sales of
the periods still open get their parts here; a closed period's statement is stored and never recomputed."""

from collections import defaultdict
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.db import migrations, models

from accounts.money import minor_unit

ZERO = Decimal(0)


def _split(amount: Decimal, groups: list[tuple[str, Decimal]], places: int) -> list[tuple[str, Decimal]]:
    """ledger.statements.split_payment as it is when this migration is written."""
    if not groups:
        return []
    weights = [total for _, total in groups]
    if sum(weights, ZERO) == 0:
        weights = [abs(total) for total in weights]
    if sum(weights, ZERO) == 0:
        weights = [Decimal(1)] * len(groups)
    whole = sum(weights, ZERO)
    step = Decimal(1).scaleb(-places)
    parts = [(amount * weight / whole).quantize(step, rounding=ROUND_HALF_UP) for weight in weights[:-1]]
    parts.append(amount - sum(parts, ZERO))
    return [(group, part) for (group, _), part in zip(groups, parts, strict=True)]


def forwards(apps: Any, schema_editor: Any) -> None:
    Sale = apps.get_model("ledger", "Sale")
    SaleLine = apps.get_model("ledger", "SaleLine")
    SalePayment = apps.get_model("ledger", "SalePayment")
    sales = Sale.objects.filter(period__closed_at__isnull=True, voided=False)
    for sale in sales.only("id", "base_currency_code").iterator(chunk_size=500):
        sums: dict[str, Decimal] = defaultdict(lambda: ZERO)
        for group, total in SaleLine.objects.filter(sale_id=sale.id).values_list("product_group", "total"):
            sums[group] += total
        groups = sorted(sums.items())
        parts = []
        for payment in SalePayment.objects.filter(sale_id=sale.id, product_group__isnull=True):
            foreign: Sequence[tuple[str, Decimal | None]]
            base = _split(payment.amount, groups, minor_unit(sale.base_currency_code))
            if payment.foreign_currency and payment.foreign_currency_amount is not None:
                foreign = _split(payment.foreign_currency_amount, groups, minor_unit(payment.foreign_currency))
            else:
                foreign = [(group, None) for group, _ in groups]
            parts += [
                SalePayment(
                    account_id=payment.account_id,
                    sale_id=sale.id,
                    period_id=payment.period_id,
                    kind=payment.kind,
                    product_group=group,
                    payment_type=payment.payment_type,
                    amount=part,
                    foreign_currency=payment.foreign_currency,
                    foreign_currency_amount=foreign_part,
                )
                for (group, part), (_, foreign_part) in zip(base, foreign, strict=True)
            ]
        SalePayment.objects.bulk_create(parts)


def backwards(apps: Any, schema_editor: Any) -> None:
    apps.get_model("ledger", "SalePayment").objects.filter(product_group__isnull=False).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("ledger", "0005_checkout_created_index"),
    ]

    operations = [
        migrations.AddField(
            model_name="salepayment",
            name="product_group",
            field=models.CharField(
                blank=True,
                help_text="Null: the sale's payment; else its part in that group.",
                max_length=255,
                null=True,
            ),
        ),
        migrations.RunPython(forwards, backwards),
    ]
