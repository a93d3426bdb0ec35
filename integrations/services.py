"""Configuring runtime integrations, testing them, and the POS lookups that call them (spec: Endpoints B, Runtime
integrations; E-commerce product, Product, Customer rules 1-3, Customer-specific discount, Shipping option).

A configuration is checked as a whole on save so that a call can never fail on its own templates: every
placeholder must be one of the kind's (``kinds.KINDS``), the URL must be http(s) with a literal host, header
names and values must be sendable, the transform must compile (JMESPath). Errors name the field
(``query.q``, ``headers.Authorization``, ``body.amount``...).

Secrets are declared (``secret_fields``, see ``core.secrets``): ``unmasked`` turns what a client sends
back (masked values included) into the configuration to save, for the API and the admin alike.

The POS lookups (``integrations.pos_api``) are plain functions, account first: each resolves where the till is
(``resolve_place``), makes one call and checks the answer; only ``lookup_product`` writes, through
``ledger.services.catalog.import_product``, after the integrator has answered (no transaction is held open over
HTTP).
"""

from __future__ import annotations

import ipaddress
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import jmespath
import jmespath.exceptions
from django.conf import settings
from django.utils import timezone

from accounts import audit
from accounts import selectors as account_selectors
from accounts.models import Account, Market, StockLocation
from accounts.services import delete_owned, unique_in_account
from core import destinations, outbound, secrets
from core.errors import InvalidInput, NotFound, ServiceError
from integrations import customers, runtime, selectors, templates
from integrations.bodies import answers
from integrations.bodies.pos import ShippingAddress
from integrations.errors import BadAnswer, IntegrationFailed
from integrations.kinds import KINDS
from integrations.models import MAX_TIMEOUT, MIN_TIMEOUT, CustomerDiscountsAnswer, Method, RuntimeIntegration
from integrations.runtime import call
from ledger.services import catalog as catalog_services

_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}")
# Set by the service on every request: a configured one would be overridden or break the request framing.
_RESERVED_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})

# What "test this integration" sends when the caller gives no values: plausible inputs of each kind.
SAMPLE_VALUES: dict[str, dict[str, Any]] = {
    "product_search": {"search_term": "shirt", "market": "dk", "currency_code": "DKK", "shop_id": "shop-1", "limit": 5},
    "product_lookup": {"barcode": "5701234567890", "market": "dk", "currency_code": "DKK", "shop_id": "shop-1"},
    "customer_lookup": {"search_term": "jensen", "market": "dk", "shop_id": "shop-1"},
    "customer_discounts": {"customer_id": "c-1", "market": "dk", "currency_code": "DKK"},
    "shipping_options": {
        "shop_id": "shop-1",
        "currency_code": "DKK",
        "market": "dk",
        "name": "Jens Jensen",
        "street": "Vestergade 1",
        "city": "København",
        "postal_code": "1456",
        "country": "Denmark",
        "country_code": "DK",
        "email": "jens@example.com",
        "phone": "+4512345678",
    },
    "giftcard_create": {"amount": Decimal("100"), "currency_code": "DKK", "shop_id": "shop-1", "market": "dk"},
    "giftcard_activate": {
        "code": "TEST-CARD",
        "id": "test-card",
        "amount": Decimal("100"),
        "currency_code": "DKK",
        "shop_id": "shop-1",
        "sale_id": "test-sale",
        "create_date": Decimal("1736931900.25"),
        "expiry_date": Decimal("1768467900.25"),
        "status": 1,
        "external_giftcard": {"batch": "2025-01"},
    },
    "giftcard_read": {"code": "TEST-CARD", "currency_code": "DKK", "shop_id": "shop-1"},
    "giftcard_pay": {
        "code": "TEST-CARD",
        "id": "test-card",
        "amount": Decimal("1"),
        "currency_code": "DKK",
        "shop_id": "shop-1",
        "sale_id": "test-sale",
    },
    "customer_account_read": {"customer_id": "c-1", "currency_code": "DKK", "shop_id": "shop-1"},
    "customer_account_pay": {
        "customer_id": "c-1",
        "amount": Decimal("1"),
        "currency_code": "DKK",
        "purchase_amount": Decimal("1"),
        "payment_type": "customer_account",
        "shop_id": "shop-1",
    },
}

FIELDS = ("kind", "enabled", "method", "url", "query", "headers", "body", "secret_fields", "timeout", "transform")
MAX_SECRET_FIELDS = 100
MASKED = (
    f"is masked ({secrets.MASK}): give the value. A stored secret is kept only at its own place, while that place "
    "is declared secret and the URL's scheme, host and port stay the same."
)


FieldProblem = tuple[str, str]  # (field, message)


def configuration_errors(data: Mapping[str, Any]) -> list[dict[str, str]]:
    """Every problem of a whole configuration (``FIELDS``), each ``{field, message, code}``, field by field in the
    order of ``FIELDS`` (the masked secrets after the places they hide in)."""
    kind = data.get("kind")
    if kind not in KINDS:
        return [{"field": "kind", "message": "must be one of: " + ", ".join(KINDS), "code": "invalid"}]
    allowed = KINDS[kind]
    query = data.get("query") or {}
    headers = data.get("headers") or {}
    body = data.get("body")
    found: list[FieldProblem] = [
        *_method_errors(data.get("method")),
        *_url_errors(data.get("url"), allowed),
        *_query_errors(query, allowed),
        *_header_errors(headers, allowed),
        *_body_errors(body, data.get("method"), allowed),
        *_secret_field_errors(data.get("secret_fields") or [], query, body),
        *_masked_errors(data.get("url"), query, headers, body),
        *_timeout_errors(data.get("timeout")),
        *_transform_errors(data.get("transform") or ""),
    ]
    return [{"field": field, "message": message, "code": "invalid"} for field, message in found]


def _method_errors(method: Any) -> list[FieldProblem]:
    return [] if method in Method.values else [("method", "must be GET or POST")]


def _url_errors(url: Any, allowed: Any) -> list[FieldProblem]:
    if not isinstance(url, str) or not url.strip():
        return [("url", "is required")]
    if len(url) > 2000:
        return [("url", "must be at most 2000 characters")]
    problem = templates.check_url(url.strip(), allowed)
    return [("url", problem)] if problem else []


def _query_errors(query: Any, allowed: Any) -> list[FieldProblem]:
    if not isinstance(query, dict):
        return [("query", "must be an object of name -> template")]
    errors: list[FieldProblem] = []
    for name, value in query.items():
        if not isinstance(value, str):
            errors.append((f"query.{name}", "must be a string template"))
        elif problem := templates.check_text(value, allowed):
            errors.append((f"query.{name}", problem))
    return errors


def _header_errors(headers: Any, allowed: Any) -> list[FieldProblem]:
    if not isinstance(headers, dict):
        return [("headers", "must be an object of name -> value")]
    if bounded := destinations.header_problem(headers):
        return [bounded]
    errors: list[FieldProblem] = []
    for name, value in headers.items():
        if problem := _header_problem(str(name), value, allowed):
            errors.append((f"headers.{name}", problem))
    return errors


def _header_problem(name: str, value: Any, allowed: Any) -> str | None:
    if not _HEADER_NAME.fullmatch(name):
        return "is not a valid header name"
    if name.lower() in _RESERVED_HEADERS:
        return "is set by the service and cannot be configured"
    if not isinstance(value, str):
        return "must be a string"
    if "\r" in value or "\n" in value:
        return "must not contain line breaks"
    return templates.check_text(value, allowed)


def _body_errors(body: Any, method: Any, allowed: Any) -> list[FieldProblem]:
    if body is None:
        return []
    errors: list[FieldProblem] = []
    if method == Method.GET:
        errors.append(("body", "a GET request has no body: use POST or leave body null"))
    for path, value in _body_strings(body, "body"):
        if problem := templates.check_text(value, allowed):
            errors.append((path, problem))
    return errors


def _secret_field_errors(declared: Any, query: Any, body: Any) -> list[FieldProblem]:
    if not isinstance(declared, list) or len(declared) > MAX_SECRET_FIELDS:
        return [("secret_fields", f"must be a list of at most {MAX_SECRET_FIELDS} places")]
    places = secrets.paths(query, body)
    return [
        (
            f"secret_fields[{index}]",
            "names no place of this configuration: use query.<name>, body.<key>.<key> (body.<key>[0] in a "
            f"list) or {secrets.URL_PATH}",
        )
        for index, place in enumerate(declared)
        if place not in places
    ]


def _masked_errors(url: Any, query: Any, headers: Any, body: Any) -> list[FieldProblem]:
    errors: list[FieldProblem] = []
    if isinstance(url, str) and secrets.MASK in url:
        errors.append(("url", MASKED))
    for root, values in (("query", query), ("headers", headers), ("body", body)):
        if isinstance(values, dict | list):
            errors.extend((place, MASKED) for place in secrets.masked_places(values, root))
    return errors


def _timeout_errors(timeout: Any) -> list[FieldProblem]:
    if not isinstance(timeout, int | Decimal) or isinstance(timeout, bool) or not MIN_TIMEOUT <= timeout <= MAX_TIMEOUT:
        return [("timeout", f"must be a number of seconds from {MIN_TIMEOUT} to {MAX_TIMEOUT}")]
    return []


def _transform_errors(transform: Any) -> list[FieldProblem]:
    if not isinstance(transform, str):
        return [("transform", "must be a JMESPath expression or empty")]
    if not transform.strip():
        return []
    try:
        jmespath.compile(transform)
    except jmespath.exceptions.JMESPathError as exc:
        return [("transform", f"is not a valid JMESPath expression: {exc}".replace("\n", " "))]
    return []


def _body_strings(value: Any, path: str) -> list[tuple[str, str]]:
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, dict):
        return [item for key, sub in value.items() for item in _body_strings(sub, f"{path}.{key}")]
    if isinstance(value, list):
        return [item for i, sub in enumerate(value) for item in _body_strings(sub, f"{path}[{i}]")]
    return []


def destination_problem(url: str) -> str | None:
    """Why the outbound guard (``core.outbound``) would refuse every call to the URL template's host, judged
    without a look-up: a literal address (``localhost`` read as 127.0.0.1) that is not public and not inside
    ``OUTBOUND_ALLOWED_NETWORKS``, or plain http to one outside them. None for a host name (the guard judges the
    addresses it resolves to on each call) and for a URL ``configuration_errors`` refuses on its own."""
    try:
        parts = destinations.split_url(re.sub(r"\{[^{}]*\}", "x", url.strip()))
    except destinations.BadUrl:
        return None
    host = (parts.hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        host = "127.0.0.1"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    reason = outbound.refusal(address)
    if reason:
        return f"the host {host} is refused for outgoing calls: {reason} (see OUTBOUND_ALLOWED_NETWORKS)"
    if parts.scheme == "http" and not outbound.inside_allowed_networks(address):
        return "plain http is only sent to addresses inside OUTBOUND_ALLOWED_NETWORKS: use https"
    return None


def masked(integration: RuntimeIntegration) -> dict[str, Any]:
    """``url``, ``query``, ``headers`` and ``body`` as they read: every secret masked."""
    return secrets.integration_view(
        url=integration.url,
        query=integration.query,
        headers=integration.headers,
        body=integration.body,
        secret_fields=integration.secret_fields,
    )


def unmasked(data: Mapping[str, Any], stored: RuntimeIntegration | None) -> dict[str, Any]:
    """The whole configuration to check and save (``FIELDS``): the fields given in ``data`` over the stored ones
    (the defaults on create), ``MASK`` values replaced by the stored secrets where that is allowed, and
    ``secret_fields`` declared: as given, or else the stored declaration plus suggestions for new names.

    When the URL's origin changes, or the declaration no longer names a place it named, a stored secret is not
    kept as it is: the fields not given are taken as given masked, and a masked value that cannot be kept is
    refused, so the secret must be given again (or removed). Otherwise a client could read a secret by
    declaring it public, or send it to a host of its choosing."""
    base = stored if stored is not None else RuntimeIntegration()
    config = {name: _normalized(name, data[name] if name in data else getattr(base, name)) for name in FIELDS}
    same = stored is None or secrets.same_origin(config["url"], stored.url)
    if "secret_fields" not in data:
        config["secret_fields"] = _suggested(config, stored)
    declared = config["secret_fields"] if isinstance(config["secret_fields"], list) else []
    narrowed = stored is not None and any(place not in declared for place in stored.secret_fields or [])
    if stored is not None and (narrowed or not same):
        view = masked(stored)
        for name in ("url", "query", "headers", "body"):
            if name not in data:
                config[name] = view[name]
    if isinstance(config["headers"], dict):
        config["headers"] = secrets.unmask_headers(
            config["headers"], stored.headers if stored else None, same_destination=same
        )
    for root in ("query", "body"):
        config[root] = secrets.unmask_declared(
            config[root], getattr(stored, root) if stored else None, root, declared, same_destination=same
        )
    if isinstance(config["url"], str):
        config["url"] = secrets.unmask_url(
            config["url"],
            stored.url if stored is not None and same else None,
            path_secret=secrets.URL_PATH in declared,
            placeholders=True,
        )
    return config


def _normalized(name: str, value: Any) -> Any:
    if name == "transform":
        return (value or "").strip()
    if name == "url":
        return value.strip() if isinstance(value, str) else value
    if name in ("query", "headers"):
        return value or {}
    return value


def _suggested(config: Mapping[str, Any], stored: RuntimeIntegration | None) -> list[str]:
    """No declaration given: the stored one (its places still present) plus the suggestion for new places."""
    present = secrets.paths(config["query"], config["body"])
    known = secrets.paths(stored.query, stored.body) if stored is not None else set()
    kept = [place for place in ((stored.secret_fields or []) if stored else []) if place in present]
    new = [place for place in secrets.suggest(config["query"], config["body"]) if place not in known | set(kept)]
    return kept + new


# The audit trail's name of a runtime integration (``accounts.audit.KINDS``); ``delete_owned`` names it alike.
AUDIT_TYPE = "runtime_integration"


def save_runtime_integration(
    *, account: Account, integration: RuntimeIntegration | None = None, data: Mapping[str, Any]
) -> RuntimeIntegration:
    """Create (``integration`` None) or update a configuration; ``data`` holds the fields to set, as a client
    sends them (masked secrets included: see ``unmasked``). Spec: Endpoints B."""
    instance = integration or RuntimeIntegration(account=account)
    if instance.pk is not None and instance.account_id != account.pk:
        raise ValueError("the runtime integration belongs to another account")
    config = unmasked(data, integration)
    errors = configuration_errors(config)
    if errors:
        raise InvalidInput(errors)
    before = None if instance.pk is None else _audited(instance)
    for name in FIELDS:
        setattr(instance, name, config[name])
    message = f"A {instance.kind} integration is already configured for this account: change that one."
    with unique_in_account(account=account, instance=instance, field="kind", message=message):
        instance.save()
        after = _audited(instance)
        shown = (_audit_view(before), _audit_view(after))
        changes = audit.diff(before, after, shown=shown)
        audit.record(
            account=account,
            action="created" if before is None else audit.change_action(changes),
            target_type=AUDIT_TYPE,
            target_id=instance.pk,
            target=str(instance),
            changes=changes,
        )
    runtime.forget_configurations(account=account)  # this process calls with it at once, the others within seconds
    return instance


def _audited(integration: RuntimeIntegration) -> dict[str, Any]:
    """The configuration as the audit trail compares it: real values (``_audit_view`` masks them)."""
    return {name: getattr(integration, name) for name in FIELDS}


def _audit_view(fields: dict[str, Any] | None) -> dict[str, Any] | None:
    """The configuration as the audit trail writes it: every secret masked, as ``masked`` reads it."""
    if fields is None:
        return None
    view = secrets.integration_view(
        url=fields["url"],
        query=fields["query"],
        headers=fields["headers"],
        body=fields["body"],
        secret_fields=fields["secret_fields"],
    )
    return {**fields, **view}


def delete_runtime_integration(*, account: Account, integration: RuntimeIntegration) -> None:
    """Delete a configuration; its call log stays (``integration`` set to null)."""
    delete_owned(account=account, instance=integration)
    runtime.forget_configurations(account=account)


def test_runtime_integration(
    *, account: Account, integration: RuntimeIntegration, values: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Call the integrator with sample values (the kind's ``SAMPLE_VALUES`` overridden by ``values``), even
    when the configuration is disabled, and report field by field where the answer does not match the kind's
    spec model: ``{ok, status_code, duration_ms, data, problems: [{field, message}]}``. Logged like any call."""
    merged = {**SAMPLE_VALUES.get(integration.kind, {}), **(values or {})}
    started = time.perf_counter()
    try:
        result = call(account=account, kind=integration.kind, values=merged, integration=integration)
    except IntegrationFailed as exc:
        return {
            "ok": False,
            "status_code": exc.upstream_status,
            "duration_ms": round((time.perf_counter() - started) * 1000),
            "data": getattr(exc, "answer", None),
            "problems": [{"field": "", "message": exc.message}],
        }
    _, problems = answers.validate(integration.kind, result.data)
    return {
        "ok": not problems,
        "status_code": result.status_code,
        "duration_ms": result.duration_ms,
        "data": result.data,
        "problems": [{"field": p.get("field", ""), "message": p.get("message", "")} for p in problems],
    }


def customer_discounts_answer(*, account: Account, customer_id: str, market: Market, refresh: bool = False) -> Any:
    """Spec: Customer-specific discounts: the ``customer_discounts`` integration's answer (after its transform)
    for the customer in ``market`` and its base currency, not yet checked against the spec model.

    An answer is remembered for ``POS_CUSTOMER_DISCOUNTS_CACHE_SECONDS`` per account, customer, market
    and currency (``CustomerDiscountsAnswer``, shared by every process), so the basket changes of a sale ask the
    integrator once. ``refresh`` asks it anyway and remembers the new answer (the POS endpoint of a customer's
    discounts does: attaching a customer fetches them fresh). A failure is not remembered: the next basket asks
    again. A changed or disabled configuration does not use what an earlier one answered. Raises what
    ``integrations.runtime.call`` raises (``NotConfigured`` without an enabled configuration).
    """
    max_age = settings.POS_CUSTOMER_DISCOUNTS_CACHE_SECONDS
    key = {"customer_id": customer_id, "market": market.identifier, "currency_code": market.currency}
    if max_age > 0 and not refresh:
        remembered = selectors.fresh_customer_discounts(account=account, max_age_seconds=max_age, **key)
        if remembered:
            return remembered[0]
    integration = runtime.configuration(account=account, kind="customer_discounts")
    values = {"customer_id": customer_id, "market": market.identifier, "currency_code": market.currency}
    result = call(account=account, kind="customer_discounts", values=values, integration=integration)
    if max_age > 0:
        answer = CustomerDiscountsAnswer(
            account=account,
            integration=integration,
            integration_updated_at=integration.updated_at,
            data=result.data,
            fetched_at=timezone.now(),
            **key,
        )
        # One statement, so two tills asking for the same customer at once both succeed (the later one wins).
        CustomerDiscountsAnswer.objects.bulk_create(
            [answer],
            update_conflicts=True,
            unique_fields=["account", "customer_id", "market", "currency_code"],
            update_fields=["integration", "integration_updated_at", "data", "fetched_at"],
        )
    return result.data


# --- The POS lookups (integrations.pos_api): where the till is, then one call to the integrator each -------------


@dataclass(frozen=True)
class Place:
    market: Market | None
    shop: StockLocation | None

    def values(self) -> dict[str, str]:
        """The ``market``, ``currency_code`` and ``shop_id`` placeholders ("" when unknown, so a template that
        uses them renders rather than fails)."""
        return {
            "market": self.market.identifier if self.market else "",
            "currency_code": self.market.currency if self.market else "",
            "shop_id": self.shop.identifier if self.shop else "",
        }


def resolve_place(*, account: Account, market: str = "", shop_id: str = "", market_required: bool = False) -> Place:
    """The market and shop a POS request names. ``shop_id`` implies its market; without either the account's
    only market is meant (a one-market account need not say it). Raises ServiceError naming the field."""
    shop = None
    if shop_id:
        shop = account_selectors.stock_location_by_identifier(account=account, identifier=shop_id)
        if shop is None:
            raise ServiceError(f"no stock location '{shop_id[:64]}' in this account", field="shop_id", code="unknown")
    found: Market | None = None
    if market:
        found = account_selectors.market_by_identifier(account=account, identifier=market)
        if found is None:
            raise ServiceError(f"no market '{market[:32]}' in this account", field="market", code="unknown")
        if shop is not None and shop.market_id != found.pk:
            raise ServiceError(
                f"the stock location '{shop.identifier}' is in market '{shop.market.identifier}', not '{market[:32]}'",
                field="market",
                code="mismatch",
            )
    elif shop is not None:
        found = shop.market
    else:
        only = list(account_selectors.markets(account=account)[:2])
        found = only[0] if len(only) == 1 else None
    if found is None and market_required:
        raise ServiceError("is required: the account has several markets", field="market", code="required")
    return Place(market=found, shop=shop)


def search_products(*, account: Account, term: str, place: Place, limit: int) -> list[dict[str, Any]]:
    """Spec: E-commerce product search (POS). The integrator's products, each checked (``retail_price``
    required), at most ``limit`` of them even when the integrator ignores the limit."""
    result = call(
        account=account, kind="product_search", values={"search_term": term, "limit": limit, **place.values()}
    )
    found: list[dict[str, Any]] = answers.require_valid("product_search", result.data)
    return found[:limit]


def lookup_product(*, account: Account, barcode: str, place: Place) -> catalog_services.ImportedProduct:
    """Spec: External product lookup (stock app, registering received goods): the Product the integrator
    answers for a scanned code is imported into the account (created, or replaced by id: a product edit event
    either way, none when nothing changed) and returned. An integrator's 404 or ``null`` means no such product
    (our 404); a price for a market the account does not have is a bad answer (the integrator's catalog and
    the account's markets disagree: staff must fix it, not the cashier)."""
    try:
        result = call(account=account, kind="product_lookup", values={"barcode": barcode, **place.values()})
    except IntegrationFailed as exc:
        if exc.upstream_status == 404:
            raise NotFound(f"The integrator knows no product with the code '{barcode[:100]}'.", code="unknown") from exc
        raise
    if result.data is None or result.data == [] or result.data == {}:
        raise NotFound(f"The integrator knows no product with the code '{barcode[:100]}'.", code="unknown")
    data: dict[str, Any] = answers.require_valid("product_lookup", result.data)
    try:
        catalog_services.check_product_references(account=account, data=data)
    except InvalidInput as exc:
        problems = exc.errors()
        raise BadAnswer(
            f"The integrator's product_lookup answer does not match the account: {answers.describe(problems)}",
            field=problems[0]["field"],
        ) from exc
    return catalog_services.import_product(account=account, data=data)


def customer_facts(customer: dict[str, Any]) -> dict[str, Any]:
    """Spec: Customer rules 1-3, as facts the POS acts on, added to the customer (balance normalised):
    ``block_sales`` (no sale to them), ``credit`` (null without a credit limit; else the balance, the limit and
    ``available``: the largest invoice or customer-account purchase rule 1 lets through), ``deposit_prompt``
    (the overdue amount to ask to be deposited, or null) and ``b2b`` (an organization number: the sale keeps
    name and address; otherwise only the identifier)."""
    out = customers.normalise_balance(customer)
    limit = out.get("credit_limit")
    balance = Decimal(out.get("balance") or 0)
    out["block_sales"] = bool(out.get("block_sales", False))
    out["credit"] = (
        None
        if limit is None
        else {"balance": balance, "credit_limit": limit, "available": max(Decimal(limit) + balance, Decimal(0))}
    )
    out["deposit_prompt"] = customers.overdue_prompt(out)
    out["b2b"] = bool(str(out.get("organization_number") or "").strip())
    return out


def lookup_customers(*, account: Account, term: str, place: Place) -> list[dict[str, Any]]:
    """Spec: Customer lookup (POS): the integrator's customers, checked, each with its rule facts."""
    result = call(account=account, kind="customer_lookup", values={"search_term": term, **place.values()})
    found: list[dict[str, Any]] = answers.require_valid("customer_lookup", result.data)
    return [customer_facts(customer) for customer in found]


def customer_discounts(*, account: Account, customer_id: str, market: Market) -> list[dict[str, Any]]:
    """Spec: Customer-specific discounts: the customer's discounts in ``market`` (its currency is the base
    currency), checked against the campaign schema of their type, prices plain numbers. Always asked afresh and
    remembered for the baskets that follow (``customer_discounts_answer``): a shop app asks here when a
    customer is attached to the sale."""
    data = customer_discounts_answer(account=account, customer_id=customer_id, market=market, refresh=True)
    found: list[dict[str, Any]] = answers.require_valid("customer_discounts", data)
    return found


def shipping_options(*, account: Account, address: dict[str, Any], stock_location: str) -> list[dict[str, Any]]:
    """Spec: Shipping options: the customer's address, the shop and its base currency in; the options out. The
    one the customer chooses goes into the sale's shipping behavior as ``method_id`` (with ``method_title``)."""
    place = resolve_place(account=account, shop_id=stock_location)
    values = {**{name: str(address.get(name, "")) for name in ShippingAddress.fields}, **place.values()}
    result = call(account=account, kind="shipping_options", values=values)
    found: list[dict[str, Any]] = answers.require_valid("shipping_options", result.data)
    return found
