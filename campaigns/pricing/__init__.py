"""The pricing engine: discount campaigns and product rules applied to a basket (issue 5).

One module per campaign family, registered here by the spec's type code; ``engine.price_basket`` is the
applicator loop. A new campaign type is one module and one line below.
"""

from campaigns.pricing import count_or_more, free_shipping, new_price, product_rules, stair, tag
from campaigns.pricing.base import Family

CAMPAIGN_TYPES: dict[str, Family] = {
    "percentage_discount-count_or_more-single_product": count_or_more.SingleProduct(),
    "percentage_discount-count_or_more-multiple_products": count_or_more.MultipleProducts(),
    "percentage_discount-tag": tag.Tag(),
    "percentage_discount-count_or_more-tag": count_or_more.Tag(),
    "new_price_discount-single_product": new_price.SingleProduct(),
    "new_price_discount-count_or_more-single_product": new_price.CountOrMoreSingleProduct(),
    "new_price_discount-stair-single_product": stair.NewPriceStair(),
    "percentage_discount-stair-single_product": stair.PercentageStair(),
    "percentage_discount-stair-tag": stair.PercentageStair(),
    "amount_discount-stair-tag": stair.AmountStair(),
    "free_shipping_by_amount": free_shipping.FreeShipping(),
}

PRODUCT_RULE_TYPES = {
    "container_deposit": product_rules.ContainerDeposit(),
}

# After the registries: the engine reads them.
from campaigns.pricing.engine import (  # noqa: E402
    PricingLine,
    PricingResult,
    clear_cache,
    compile_market,
    evaluate,
    price_basket,
)

__all__ = [
    "CAMPAIGN_TYPES",
    "PRODUCT_RULE_TYPES",
    "PricingLine",
    "PricingResult",
    "clear_cache",
    "compile_market",
    "evaluate",
    "price_basket",
]
