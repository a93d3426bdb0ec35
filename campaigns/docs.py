"""Examples of a campaign and a product rule as an integrator imports them (spec: Discount campaigns, Product
rules): the import endpoints' documentation posts them (``imports.docs``) and the read API answers them stored
(``campaigns.api``), so both show the same definitions."""

from __future__ import annotations

CAMPAIGN_DEFINITION = {
    "id": "tshirts-3-for-2",
    "type": "percentage_discount-count_or_more-single_product",
    "name": "T-shirts 3 for 2",
    "display_name": "3 for 2",
    "priority": 10,
    "members_only": False,
    "continue_evaluation": False,
    "product_id": "tshirt-basic",
    "percentage": 0.3333,
    "count": 3,
}
PRODUCT_RULE_DEFINITION = {
    "id": "pant-a",
    "type": "container_deposit",
    "name": "Pant A",
    "display_name": {"da": "Pant A", "en": "Deposit A"},
    "tag": "pant-a",
    "product_group": "deposits",
    "price": {"dk": 1.0, "se": 1.0},
}
