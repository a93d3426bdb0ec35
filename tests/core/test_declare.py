"""core.declare: a body declared once as a class validates as its hand-written node tree and is its OpenAPI schema."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

import pytest
from drf_spectacular.validation import validate_schema
from hypothesis import given, settings
from hypothesis import strategies as st

from core.declare import Body, Field, components_of, optional, rule
from core.errors import InvalidInput
from core.nodes import INVALID, Arr, Components, Int, Node, Num, Obj, Report, Str, join
from imports.bodies import IncomingOrdersRequest
from orders.bodies import ExternalOrder, IncomingOrder, LineItem
from tests.support.imports import as_posted, order
from tests.support.openapi import published


def outcome(node: Node, value: Any) -> tuple[Any, list[dict[str, str]], list[dict[str, str]]]:
    report = Report()
    cleaned = node.check(copy.deepcopy(value), "", report)
    return (None if cleaned is INVALID else cleaned), report.errors, report.warnings


# --- The declared order bodies (orders.bodies): what they pin beyond tests/orders/test_order_validation.py --


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (order(), ([], [])),
        (order(payment={"reference": "r"}, shipping={"method_title": {"da": "Levering", "en": "Delivery"}}), ([], [])),
        (
            order(payment={"reference": "r"}, shipping={"method_title": {}}),
            ([("shipping.method_title", "blank")], []),
        ),
        (order(customer=None, payment=None, colour="red"), ([], [("colour", "unknown_field")])),
        (
            order(basket={"currency": "DKK", "line_items": [{"name": "x\x00", "quantity": 2.5, "price": 1, "x": 1}]}),
            (
                [
                    ("basket.line_items[0].product_identifier", "required"),
                    ("basket.line_items[0].name", "invalid"),
                    ("basket.line_items[0].quantity", "invalid_type"),
                ],
                [("basket.line_items[0].x", "unknown_field")],
            ),
        ),
        (
            order(basket={"currency": "DKK", "line_items": [{"product_identifier": "p", "name": None, "quantity": 1}]}),
            (
                # A required field sent as null: one error, "required" (not also "invalid_type").
                [("basket.line_items[0].name", "required"), ("basket.line_items[0].price", "required")],
                [],
            ),
        ),
    ],
)
def test_the_declared_incoming_order_names_every_error_and_warning(item, expected):
    cleaned, errors, warnings = outcome(IncomingOrder, as_posted(item))

    assert ([(e["field"], e["code"]) for e in errors], [(w["field"], w["code"]) for w in warnings]) == expected
    assert (cleaned is None) == bool(errors)


def test_an_explicit_null_counts_as_left_out_and_unknown_fields_are_dropped():
    cleaned, errors, _ = outcome(IncomingOrder, as_posted(order(customer=None, colour="red")))

    assert errors == []
    assert "customer" not in cleaned and "colour" not in cleaned


def test_the_declared_external_order_takes_no_payment_or_shipping():
    cleaned, errors, warnings = outcome(ExternalOrder, as_posted(order(payment={"reference": "r"})))

    assert errors == []
    assert "payment" not in cleaned
    assert [(w["field"], w["code"]) for w in warnings] == [("payment", "unknown_field")]
    assert outcome(ExternalOrder, as_posted(order(customer={"name": "Jane"})))[1] == [
        {"field": "customer.customer_identifier", "message": "is required", "code": "required"}
    ]


def test_numbers_stay_as_parsed():
    item = as_posted(order())
    item["basket"]["line_items"][0]["price"] = Decimal("1E-7")

    cleaned, errors, _ = outcome(IncomingOrder, item)

    assert errors == []
    price = cleaned["basket"]["line_items"][0]["price"]
    assert type(price) is Decimal and str(price) == "1E-7"
    assert type(cleaned["basket"]["line_items"][0]["quantity"]) is int


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.decimals(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=30,
)
line_items = st.fixed_dictionaries(
    {},
    optional={
        "product_identifier": st.text(max_size=3) | json_values,
        "name": st.text(max_size=3) | json_values,
        "quantity": st.integers(-2, 3) | json_values,
        "price": st.decimals(-2, 3, allow_nan=False, allow_infinity=False) | json_values,
        "image_url": st.sampled_from(["https://x/y.png", "img.png"]) | json_values,
        "discounts": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "name": st.text(max_size=2),
                    "type": st.sampled_from(["amount", "percentage", "amount_per_item", "bogus"]),
                    "amount": st.decimals(-1, 2, allow_nan=False, allow_infinity=False),
                },
            ),
            max_size=2,
        ),
    },
)
orders = st.fixed_dictionaries(
    {},
    optional={
        "order_identifier": st.text(max_size=3) | json_values,
        "basket": st.fixed_dictionaries(
            {},
            optional={
                "currency": st.sampled_from(["DKK", "XYZ"]) | json_values,
                "line_items": st.lists(line_items, max_size=3) | json_values,
                "discounts": st.lists(json_values, max_size=2),
            },
        )
        | json_values,
        "customer": json_values,
        "payment": st.just({"reference": "r"}) | json_values,
        "shipping": st.just({"method_id": "gls"}) | json_values,
        "extra": json_values,
    },
)


DECLARED_KEYS = set(IncomingOrder.fields)


@settings(max_examples=400, deadline=None)
@given(orders)
def test_any_order_is_cleaned_without_errors_or_refused_with_errors_on_its_own_fields(item):
    cleaned, errors, warnings = outcome(IncomingOrder, item)

    assert (cleaned is None) == bool(errors)
    if cleaned is not None:
        assert set(cleaned) <= DECLARED_KEYS
    for problem in (*errors, *warnings):
        top = problem["field"].split(".")[0].split("[")[0]
        assert top in DECLARED_KEYS or (problem["code"] == "unknown_field" and top in item)


# --- The declaration layer -------------------------------------------------------------------------------------


class Step(Body):
    """A step of a stair."""

    count = Field(Int(minimum=1), description="How many items.")
    price = optional(Num(minimum=0), description="The price per item.")
    since = optional(Str(), name="from")
    check = optional(Str())  # a JSON key that is also the name of a body method

    @rule
    def price_needs_count_of_two(step: dict[str, Any], path: str, report: Report) -> None:
        """A step with a price counts at least two."""
        if "price" in step and step["count"] < 2:
            report.error(join(path, "count"), "must be at least 2 with a price", "too_small")


class TaggedStep(Step, schema_name="Tagged"):
    tag = Str()
    count = Int(minimum=3)  # overridden where it stands


def test_a_bare_node_is_required_and_optional_fields_may_be_left_out_or_null():
    assert outcome(Step, {"count": 2, "price": None}) == ({"count": 2}, [], [])
    assert outcome(Step, {})[1] == [{"field": "count", "message": "is required", "code": "required"}]


def test_a_field_may_have_a_json_key_that_is_not_a_python_name():
    assert outcome(Step, {"count": 2, "from": "2025", "check": "x"})[0] == {"count": 2, "from": "2025", "check": "x"}
    assert "since" not in Step.fields
    assert callable(Step.check)


def test_a_rule_runs_on_the_valid_object_and_names_its_field():
    assert outcome(Step, {"count": 1, "price": 5})[1] == [
        {"field": "count", "message": "must be at least 2 with a price", "code": "too_small"}
    ]
    assert outcome(Step, {"count": 0, "price": 5})[1] == [
        {"field": "count", "message": "must be positive", "code": "out_of_range"}
    ]


def test_a_subclass_adds_fields_and_rules_and_overrides_a_field_in_place():
    assert list(TaggedStep.fields) == ["count", "price", "from", "check", "tag"]
    assert TaggedStep.rules == Step.rules
    assert TaggedStep.node.required == ("count", "tag")
    assert outcome(TaggedStep, {"count": 2, "tag": "t"})[1] == [
        {"field": "count", "message": "must be at least 3", "code": "out_of_range"}
    ]


def test_every_error_of_a_nested_body_is_named_by_its_path():
    class Stairs(Body):
        steps = Arr(Step, min_items=1)

    errors = outcome(Stairs, {"steps": [{"count": 0}, {"count": 2, "price": -1, "x": 1}, {}]})[1]

    assert [(e["field"], e["code"]) for e in errors] == [
        ("steps[0].count", "out_of_range"),
        ("steps[1].price", "out_of_range"),
        ("steps[2].count", "required"),
    ]


def test_validated_answers_the_cleaned_body_or_refuses_with_every_error():
    assert Step.validated({"count": 2}) == {"count": 2}
    with pytest.raises(InvalidInput) as refused:
        Step.validated({"count": "2", "price": "1"})
    assert [e["field"] for e in refused.value.errors()] == ["count", "price"]


def test_a_body_is_a_declaration_not_a_value():
    with pytest.raises(TypeError, match="body declaration"):
        Step()


def test_the_declared_tree_is_an_obj_of_the_declared_nodes():
    assert isinstance(LineItem.node, Obj)
    assert LineItem.node.required == ("product_identifier", "name", "quantity", "price")
    assert list(LineItem.node.fields) == [
        "product_identifier",
        "variant_identifier",
        "barcode",
        "image_url",
        "name",
        "quantity",
        "price",
        "discounts",
    ]


# --- The schema ----------------------------------------------------------------------------------------------------


def test_the_schema_shows_fields_required_names_descriptions_and_rules():
    schema = components_of([Step])["Step"]

    assert schema["required"] == ["count"]
    assert schema["properties"]["count"] == {
        "type": "integer",
        "maximum": 1_000_000,
        "minimum": 1,
        "description": "How many items.",
    }
    assert schema["properties"]["price"]["description"] == "The price per item."
    assert "null" in schema["properties"]["price"]["type"]
    assert set(schema["properties"]) == {"count", "price", "from", "check"}
    assert schema["description"] == "A step of a stair.\n\nRules:\n- A step with a price counts at least two."


def test_nested_bodies_are_components_of_their_own():
    schemas = components_of([IncomingOrdersRequest])

    assert {"IncomingOrders", "IncomingOrder", "OrderBasket", "OrderLineItem", "CurrencyCode"} <= set(schemas)
    line = schemas["OrderLineItem"]
    assert line["required"] == ["product_identifier", "name", "quantity", "price"]
    assert line["properties"]["price"]["exclusiveMinimum"] == 0
    assert line["properties"]["discounts"]["items"] == {"$ref": "#/components/schemas/OrderLineItemDiscount"}
    assert schemas["IncomingOrder"]["properties"]["basket"] == {
        "allOf": [{"$ref": "#/components/schemas/OrderBasket"}],
        "description": "What is ordered.",
    }
    assert "DKK" in schemas["CurrencyCode"]["enum"]


def test_two_bodies_of_one_schema_name_are_refused_when_the_schema_is_built():
    class Other(Body, schema_name="Step"):
        x = Str()

    with pytest.raises(ValueError, match="two schemas are named 'Step'"):
        components_of([Step, Other])


def test_a_body_inside_a_schema_is_a_reference_to_its_component():
    components = Components()

    assert IncomingOrder.json_schema(components) == {"$ref": "#/components/schemas/IncomingOrder"}
    assert components.schemas["IncomingOrder"] == IncomingOrder.object_schema(Components())


def refs(value: Any) -> set[str]:
    if isinstance(value, dict):
        return {value["$ref"]} if "$ref" in value else set().union(*(refs(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(refs(v) for v in value))
    return set()


def test_drf_spectacular_publishes_a_body_with_a_component_per_nested_body():
    schema = published(IncomingOrdersRequest)

    body = schema["paths"]["/orders"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/IncomingOrdersRequest"}
    components = schema["components"]["schemas"]
    assert {"IncomingOrdersRequest", "IncomingOrderRequest", "OrderLineItemRequest", "CurrencyCodeRequest"} <= set(
        components
    )
    assert components["OrderLineItemRequest"]["properties"]["quantity"]["minimum"] == 1
    validate_schema(schema)  # a valid OpenAPI 3.1 document
    defined = {f"#/components/schemas/{name}" for name in components}
    assert refs(schema) <= defined  # no reference to a component the document lacks
    # Every component of the body is used; the export catalogue (exports.openapi.publish) stands on its own.
    assert {ref for ref in defined - refs(schema) if not ref.startswith("#/components/schemas/Export")} == set()
