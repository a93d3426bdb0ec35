"""Validation cost of one import batch: imports.schema against equivalent nested DRF serializers.

Run: .venv/bin/python bench/validation.py  (no server or database needed). Prints both times and
the ratio for the same 100-order batch, so the figure is measured in one run on this machine.
"""

from __future__ import annotations

import json
import os
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from rest_framework import serializers  # noqa: E402

from imports.definitions import INCOMING_ORDER  # noqa: E402
from imports.schema import Report  # noqa: E402


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


def batch(n: int = 100) -> list[dict]:
    line = {
        "product_identifier": "1001",
        "variant_identifier": "1001-m",
        "barcode": "5701234567890",
        "image_url": "https://shop.example.com/1001.png",
        "name": "T-shirt",
        "quantity": 2,
        "price": 149.95,
        "discounts": [{"name": "Sale", "type": "percentage", "amount": 0.1}],
    }
    orders = [
        {
            "order_identifier": f"o-{i}",
            "basket": {"currency": "DKK", "line_items": [line, line, line], "discounts": []},
            "customer": {"customer_identifier": "c1", "name": "Jane", "email": "j@example.com"},
            "payment": {"reference": "psp-1"},
        }
        for i in range(n)
    ]
    return json.loads(json.dumps(orders), parse_float=Decimal)


def timed(fn, rounds: int) -> float:
    start = time.perf_counter()
    for _ in range(rounds):
        fn()
    return (time.perf_counter() - start) / rounds


def main() -> None:
    orders = batch()
    rounds = 30

    def ours() -> None:
        for order in orders:
            INCOMING_ORDER.check(order, "", Report())

    def drf() -> None:
        for order in orders:
            OrderSerializer(data=order).is_valid()

    ours(), drf()  # warm up
    t_ours, t_drf = timed(ours, rounds), timed(drf, rounds)
    print(f"100 orders x 3 line items, mean of {rounds} rounds")
    print(f"  imports.schema       {t_ours * 1000:8.2f} ms/batch  ({100 / t_ours:9.0f} orders/s)")
    print(f"  DRF serializers      {t_drf * 1000:8.2f} ms/batch  ({100 / t_drf:9.0f} orders/s)")
    print(f"  ratio (DRF / schema) {t_drf / t_ours:8.1f}x")


if __name__ == "__main__":
    main()
