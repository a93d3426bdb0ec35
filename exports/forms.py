"""The export queue form by type: filters, transform and delivery as labelled fields instead of JSON, for every
face that edits a queue (the admin's ``exports.admin``, the back-office's queue pages).

A person picks the transform type and the delivery type and fills in that type's fields (``CONFIG_FIELDS`` names
the types each field belongs to). The form assembles from them the same JSON the REST API takes and checks it with
the same service function (``services.validate_queue``), putting each error on the field it names
(``delivery.url`` on the URL field, ``transform.columns[1].path`` on the columns table, as "row 2: path: ...").

Keys a type has but the form shows no field for (``skip_if``, a web hook's timeouts, ...) are kept from the
stored configuration. The raw JSON stays reachable as the model's ``filters``, ``transform`` and ``delivery``
fields: with "Edit the JSON instead" ticked, the JSON text is saved as typed and the fields are ignored;
otherwise the fields win. A post without the typed fields (a script, an older form) is read as JSON too. Secrets
in the delivery show as ``MASK``; a masked value sent back keeps the stored one (``serializers.unmask``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django import forms
from django.utils.text import format_lazy
from django.utils.translation import gettext, gettext_lazy

from accounts.models import Account
from core import jsonparse
from core.errors import ServiceError
from core.jsonenc import DecimalJSONEncoder
from core.widgets import RowsWidget
from exports import services
from exports.deliveries import REGISTRY as DELIVERIES
from exports.models import ExportQueue
from exports.serializers import MASK, mask, unmask
from exports.transforms import REGISTRY as TRANSFORMS
from exports.transforms.csv import DERIVED as CSV_DERIVED
from exports.transforms.csv import ROW_MODES

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

ALL_TRANSFORMS = tuple(sorted(TRANSFORMS))
TEMPLATED = ("mustache", "handlebars")
FORMATTED = ("csv", "mustache", "handlebars", "simple_json")
FILE = ("ftp", "sftp")
_CODE = {"class": "vLargeTextField config-code", "rows": 10, "cols": 90, "spellcheck": "false"}
_SECRET = forms.PasswordInput(render_value=True, attrs={"autocomplete": "new-password"})
_DEFAULT = ("", gettext_lazy("(default)"))
ANSWER_CHARS = 500


@dataclass(frozen=True)
class ConfigField:
    """One labelled input of the queue form: the configuration key it writes (``auth.token`` is nested) in the
    group ``filters``, ``transform`` or ``delivery``, for the types listed (filters: always)."""

    group: str
    key: str
    types: tuple[str, ...]
    kind: str  # text, code, secret, int, bool, choice, list (comma separated), lines, rows
    label: StrOrPromise
    help: StrOrPromise = ""
    default: Any = None  # a bool equal to its default is left out of the JSON
    choices: tuple[tuple[str, StrOrPromise], ...] = ()
    widget: forms.Widget | None = None
    placeholder: str = ""

    @property
    def name(self) -> str:
        return f"{self.group}__{self.key.replace('.', '_')}"

    def form_field(self) -> forms.Field:
        attrs = {"placeholder": self.placeholder} if self.placeholder else {}
        common: dict[str, Any] = {"required": False, "label": self.label, "help_text": self.help}
        if self.kind == "int":
            return forms.IntegerField(**common, widget=forms.NumberInput(attrs=attrs))
        if self.kind == "bool":
            return forms.BooleanField(**common, initial=bool(self.default))
        if self.kind == "choice":
            return forms.ChoiceField(**common, choices=[_DEFAULT, *self.choices])
        if self.kind == "code" or self.kind == "lines":
            return forms.CharField(**common, strip=False, widget=forms.Textarea(attrs={**_CODE, **attrs}))
        if self.kind == "secret":
            return forms.CharField(**common, strip=False, widget=_SECRET)
        if self.kind == "rows":
            return forms.CharField(**common, widget=self.widget)
        return forms.CharField(**common, widget=forms.TextInput(attrs={"class": "vTextField", **attrs}))

    def to_config(self, value: Any) -> Any:
        """The form's value as the configuration holds it; None leaves the key out."""
        if self.kind == "bool":
            return None if bool(value) == bool(self.default) else bool(value)
        if self.kind == "int":
            return value
        if self.kind == "list":
            items = [part.strip() for part in str(value or "").split(",")]
            return [item for item in items if item] or None
        if self.kind == "lines":
            lines = [line.strip() for line in str(value or "").splitlines()]
            return [line for line in lines if line] or None
        if self.kind == "rows":
            parsed = jsonparse.loads(value) if value else None
            return parsed or None
        return value if value not in (None, "") else None

    def to_initial(self, value: Any) -> Any:
        if self.kind == "bool":
            return self.default if value is None else value
        if self.kind == "list" and isinstance(value, list):
            return ", ".join(str(item) for item in value)
        if self.kind == "lines" and isinstance(value, list):
            return "\n".join(str(item) for item in value)
        if self.kind == "rows":
            return json.dumps(value, cls=DecimalJSONEncoder, ensure_ascii=False) if value is not None else ""
        return "" if value is None else value


def _columns_widget() -> RowsWidget:
    return RowsWidget(
        shape="list",
        add_label="Add a column",
        columns=[
            {"key": "header", "label": "Header", "placeholder": "Total"},
            {"key": "path", "label": "Value path", "placeholder": "summary.total"},
            {
                "key": "aggregate",
                "label": "Aggregate (grouped rows)",
                "choices": [["", "-"], ["first", "first"], ["sum", "sum"], ["count", "count"]],
            },
            {"key": "value", "label": "Constant", "placeholder": "(instead of a path)"},
            {"key": "derived", "label": "Derived", "choices": [["", "-"], *[[code, code] for code in CSV_DERIVED]]},
            {
                "key": "format",
                "label": "Format",
                "placeholder": "text",
                "suggestions": ["text", "number", "money", "date:%Y-%m-%d", "date:%Y-%m-%d %H:%M:%S", "date:%d.%m.%Y"],
            },
        ],
    )


def _pairs_widget(name: str, value: str, add: str) -> RowsWidget:
    return RowsWidget(
        shape="object",
        add_label=add,
        mask=MASK,
        columns=[{"key": "name", "label": name}, {"key": "value", "label": value}],
    )


# The CSV transform's row modes (transforms.csv.ROW_MODES) as the form offers them.
ROW_LABELS: dict[str, StrOrPromise] = {
    "entity": gettext_lazy("entity"),
    "line_items": gettext_lazy("line items"),
    "line_items_grouped": gettext_lazy("line items grouped"),
    "payments_grouped": gettext_lazy("payments grouped"),
    "reconciliations": gettext_lazy("reconciliations"),
    "tax_summaries": gettext_lazy("tax summaries"),
}

TYPE_HELP = {
    "identity": gettext_lazy("The entity as it is: {element_key: entity} as JSON."),
    "mustache": gettext_lazy("A Mustache template (logic-less) producing JSON, CSV, XML or text."),
    "handlebars": gettext_lazy("A Handlebars template with the money, date and json helpers."),
    "csv": gettext_lazy("A CSV file: one row per entity (or per line item, payment group ...), the columns you list."),
    "simple_json": gettext_lazy("A flat JSON object per entity: output keys and the value each takes."),
    "webhook": gettext_lazy("POST to an https URL, signed (webhook-id, webhook-timestamp, webhook-signature)."),
    "email": gettext_lazy("An e-mail with the export attached, sent through the operator's mail relay."),
    "ftp": gettext_lazy("Upload a file over FTP or FTPS."),
    "sftp": gettext_lazy("Upload a file over SSH (SFTP)."),
}

CONFIG_FIELDS: tuple[ConfigField, ...] = (
    # --- filters ---
    ConfigField(
        "filters",
        "stock_locations",
        (),
        "list",
        gettext_lazy("Only stock locations"),
        gettext_lazy("Identifiers, comma separated; empty: all."),
    ),
    ConfigField(
        "filters",
        "markets",
        (),
        "list",
        gettext_lazy("Only markets"),
        gettext_lazy("Market identifiers, comma separated; empty: all."),
    ),
    ConfigField(
        "filters",
        "ignore_stock_event_types",
        (),
        "list",
        gettext_lazy("Ignore stock event types"),
        gettext_lazy("Stock events only: types to leave out, comma separated."),
    ),
    # --- transform ---
    ConfigField(
        "transform",
        "template",
        TEMPLATED,
        "code",
        gettext_lazy("Template"),
        gettext_lazy(
            "Sees elements (the batch's entities, in real time one), queue, account, now and delivery_id. The entity "
            "type's fields are listed beside it."
        ),
    ),
    ConfigField(
        "transform",
        "content_type",
        TEMPLATED,
        "text",
        gettext_lazy("Content type"),
        gettext_lazy(
            "text/plain (default), application/json, text/csv, text/html or application/xml; the file extension "
            "follows it."
        ),
        placeholder="text/plain",
    ),
    ConfigField(
        "transform",
        "extension",
        TEMPLATED,
        "text",
        gettext_lazy("File extension"),
        gettext_lazy("Overrides it, without the dot."),
    ),
    ConfigField(
        "transform",
        "escape",
        ("mustache",),
        "choice",
        gettext_lazy("Escaping of {{x}}"),
        gettext_lazy("Default: html for HTML and XML, json for JSON, none otherwise. {{{x}}} is never escaped."),
        choices=(("html", "html"), ("json", "json"), ("none", "none")),
    ),
    ConfigField(
        "transform",
        "rows",
        ("csv",),
        "choice",
        gettext_lazy("Rows"),
        gettext_lazy(
            "One row per entity (default), per line item, per group of line items, per payment type and currency, per "
            "reconciliation or per tax summary. A column's path is relative to the row."
        ),
        choices=tuple((mode, ROW_LABELS.get(mode, mode.replace("_", " "))) for mode in ROW_MODES),
    ),
    ConfigField(
        "transform",
        "columns",
        ("csv",),
        "rows",
        gettext_lazy("Columns"),
        gettext_lazy(
            "One row per column, in order. Each column takes its value from a value path (e.g. identifier, "
            "summary.total, entity.identifier: the parent entity from a line item), a constant, or derived (type: the "
            "sale's type). Aggregate (line items grouped only): first, sum or count (no path). Format: text, number, "
            "money or date:%Y-%m-%d (any strftime format). A column's language, if set in the JSON, is kept."
        ),
        widget=_columns_widget(),
    ),
    ConfigField(
        "transform",
        "group_by",
        ("csv",),
        "list",
        gettext_lazy("Group line items by"),
        gettext_lazy("Rows: line items grouped only. Line item paths, comma separated, e.g. taxes[0].rate."),
    ),
    ConfigField(
        "transform",
        "separator",
        ("csv",),
        "text",
        gettext_lazy("Separator"),
        gettext_lazy("One character; default ;"),
        placeholder=";",
    ),
    ConfigField(
        "transform",
        "decimal_separator",
        FORMATTED,
        "choice",
        gettext_lazy("Decimal separator"),
        gettext_lazy("For money and numbers. Default: , in CSV, . otherwise."),
        choices=((",", gettext_lazy(", (comma)")), (".", gettext_lazy(". (point)"))),
    ),
    ConfigField(
        "transform",
        "quoting",
        ("csv",),
        "choice",
        gettext_lazy("Quoting"),
        gettext_lazy("minimal (default), all, or none (escapes with a backslash)."),
        choices=(("minimal", "minimal"), ("all", "all"), ("none", "none")),
    ),
    ConfigField(
        "transform",
        "required_values",
        ("csv",),
        "list",
        gettext_lazy("Required values"),
        gettext_lazy(
            "Paths, comma separated (relative to the row, entity. for the entity): a row missing any is left out."
        ),
    ),
    ConfigField(
        "transform",
        "language",
        ("csv",),
        "list",
        gettext_lazy("Languages"),
        gettext_lazy(
            "For translated texts (L10nString): the first of these languages a text has, e.g. da, en; default: JSON."
        ),
    ),
    ConfigField(
        "transform",
        "whole_numbers_as_integers",
        ("csv",),
        "bool",
        gettext_lazy("Whole numbers as integers"),
        gettext_lazy("2.0 is written 2."),
        default=True,
    ),
    ConfigField("transform", "header", ("csv",), "bool", gettext_lazy("Header row"), default=True),
    ConfigField(
        "transform",
        "bom",
        ("csv",),
        "bool",
        gettext_lazy("Byte order mark"),
        gettext_lazy("For spreadsheet programs."),
        default=False,
    ),
    ConfigField(
        "transform",
        "date_format",
        TEMPLATED,
        "text",
        gettext_lazy("Date format"),
        gettext_lazy("strftime format of dates; default %Y-%m-%d %H:%M:%S."),
        placeholder="%Y-%m-%d %H:%M:%S",
    ),
    ConfigField(
        "transform",
        "timezone",
        FORMATTED,
        "text",
        gettext_lazy("Time zone"),
        gettext_lazy("For dates, e.g. Europe/Copenhagen; default UTC."),
        placeholder="UTC",
    ),
    ConfigField(
        "transform",
        "fields",
        ("simple_json",),
        "rows",
        gettext_lazy("Output keys"),
        gettext_lazy(
            "One row per key, in order. Value: {path} keeps the value's JSON type; text with placeholders is a "
            "string; formats: {summary.total|money}, {timing.timestamp|date:%Y-%m-%d}."
        ),
        widget=_pairs_widget("Key", "Value", "Add a key"),
    ),
    ConfigField(
        "transform",
        "drop_empty",
        ("simple_json",),
        "bool",
        gettext_lazy("Drop empty keys"),
        gettext_lazy("Leave out null values."),
    ),
    ConfigField(
        "transform",
        "skip_voided",
        ALL_TRANSFORMS,
        "bool",
        gettext_lazy("Skip voided entities"),
        gettext_lazy("Voided entities are not sent."),
    ),
    # --- delivery ---
    ConfigField(
        "delivery",
        "url",
        ("webhook",),
        "text",
        gettext_lazy("URL"),
        gettext_lazy(
            "https://... Plain http only to addresses inside OUTBOUND_ALLOWED_NETWORKS (a test or on-premises "
            "receiver)."
        ),
        placeholder="https://erp.example.com/hooks/orders",
    ),
    ConfigField(
        "delivery",
        "headers",
        ("webhook",),
        "rows",
        gettext_lazy("Headers"),
        gettext_lazy(
            "Sent with every request. Values (but Accept, Content-Type, User-Agent ...) are secrets: they show as "
            "******** and are kept when saved back unchanged while the URL's host stays the same."
        ),
        widget=_pairs_widget("Header", "Value", "Add a header"),
    ),
    ConfigField(
        "delivery",
        "auth.type",
        ("webhook",),
        "choice",
        gettext_lazy("Authentication"),
        gettext_lazy("None (default), HTTP basic, or a bearer token."),
        choices=(
            ("basic", gettext_lazy("basic (user name and password)")),
            ("bearer", gettext_lazy("bearer token")),
        ),
    ),
    ConfigField(
        "delivery",
        "auth.username",
        ("webhook",),
        "text",
        gettext_lazy("User name"),
        gettext_lazy("Basic authentication."),
    ),
    ConfigField(
        "delivery",
        "auth.password",
        ("webhook",),
        "secret",
        gettext_lazy("Password"),
        gettext_lazy("Basic authentication."),
    ),
    ConfigField(
        "delivery",
        "auth.token",
        ("webhook",),
        "secret",
        gettext_lazy("Bearer token"),
        gettext_lazy("Sent as Authorization: Bearer."),
    ),
    ConfigField(
        "delivery",
        "secret",
        ("webhook",),
        "secret",
        gettext_lazy("Signing secret"),
        gettext_lazy("whsec_ followed by base64. Empty: one is generated and shown once when you save."),
    ),
    ConfigField(
        "delivery",
        "recipients",
        ("email",),
        "lines",
        gettext_lazy("Recipients"),
        gettext_lazy("One address a line, at most 10."),
        placeholder="ops@example.com",
    ),
    ConfigField(
        "delivery",
        "subject",
        ("email",),
        "text",
        gettext_lazy("Subject"),
        gettext_lazy("Placeholders {queue}, {date}, {delivery_id}; default: Export {queue} {date}."),
        placeholder="Export {queue} {date}",
    ),
    ConfigField(
        "delivery",
        "from_name",
        ("email",),
        "text",
        gettext_lazy("From name"),
        gettext_lazy("Display name; the address is the operator's."),
    ),
    ConfigField(
        "delivery", "reply_to", ("email",), "text", gettext_lazy("Reply to"), gettext_lazy("The address replies go to.")
    ),
    ConfigField(
        "delivery",
        "body",
        ("email",),
        "code",
        gettext_lazy("Message"),
        gettext_lazy("Plain text; default: a one-line note."),
    ),
    ConfigField("delivery", "host", FILE, "text", gettext_lazy("Host"), placeholder="ftp.example.com"),
    ConfigField("delivery", "port", FILE, "int", gettext_lazy("Port"), gettext_lazy("Default 21 (FTP) or 22 (SFTP).")),
    ConfigField("delivery", "username", FILE, "text", gettext_lazy("User name")),
    ConfigField(
        "delivery",
        "password",
        FILE,
        "secret",
        gettext_lazy("Password"),
        gettext_lazy(
            "SFTP: a password or a private key. Shows as ******** once saved; kept when saved back unchanged."
        ),
    ),
    ConfigField(
        "delivery",
        "private_key",
        ("sftp",),
        "code",
        gettext_lazy("Private key"),
        gettext_lazy("OpenSSH or PEM text (Ed25519, ECDSA, RSA), instead of a password."),
    ),
    ConfigField("delivery", "private_key_passphrase", ("sftp",), "secret", gettext_lazy("Key passphrase")),
    ConfigField(
        "delivery",
        "host_key",
        ("sftp",),
        "code",
        gettext_lazy("Host key"),
        gettext_lazy("The server's key, e.g. ssh-ed25519 AAAA... (ssh-keyscan prints it). An unknown key is refused."),
    ),
    ConfigField(
        "delivery",
        "insecure_accept_any_host_key",
        ("sftp",),
        "bool",
        gettext_lazy("Accept any host key (insecure)"),
        gettext_lazy("A man in the middle would get the password and the export."),
        default=False,
    ),
    ConfigField(
        "delivery",
        "tls",
        ("ftp",),
        "bool",
        gettext_lazy("TLS (FTPS)"),
        gettext_lazy("Explicit TLS; certificates are verified."),
    ),
    ConfigField(
        "delivery",
        "ca_certificate",
        ("ftp",),
        "code",
        gettext_lazy("CA certificate"),
        gettext_lazy("PEM, for a self-signed FTPS server."),
    ),
    ConfigField("delivery", "passive", ("ftp",), "bool", gettext_lazy("Passive mode"), default=True),
    ConfigField(
        "delivery",
        "path",
        FILE,
        "text",
        gettext_lazy("Path"),
        gettext_lazy("File path template: {queue}, {date}, {delivery_id}, {ext}. Relative to the login directory."),
        placeholder="exports/{queue}/{date}/{delivery_id}.{ext}",
    ),
    ConfigField(
        "delivery", "timeout", FILE, "int", gettext_lazy("Timeout"), gettext_lazy("Seconds, 1 to 300; default 30.")
    ),
)
FIELDS_BY_NAME = {field.name: field for field in CONFIG_FIELDS}
TYPE_FIELDS = ("transform__type", "delivery__type")


def fields_of(group: str, kind: str | None = None) -> list[ConfigField]:
    return [f for f in CONFIG_FIELDS if f.group == group and (group == "filters" or kind in f.types)]


def config_initial(group: str, config: Any) -> dict[str, Any]:
    """The form's initial values of ``group``'s fields from a stored (masked) configuration."""
    config = config if isinstance(config, dict) else {}
    initial: dict[str, Any] = {}
    for field in fields_of(group, config.get("type")):
        head, _, sub = field.key.partition(".")
        value = config.get(head)
        if sub:
            value = value.get(sub) if isinstance(value, dict) else None
        initial[field.name] = field.to_initial(value)
    if group != "filters":
        initial[f"{group}__type"] = config.get("type", "")
    return initial


def assemble(group: str, kind: str | None, values: dict[str, Any], base: Any) -> dict[str, Any]:
    """The configuration of ``group`` from the form's cleaned ``values``: the type, every shown field that has a
    value, and the keys of ``base`` (the stored configuration, if of the same type) that no field shows."""
    shown = fields_of(group, kind)
    managed = {f.key.partition(".")[0] for f in shown}
    base = base if isinstance(base, dict) and (group == "filters" or base.get("type") == kind) else {}
    out: dict[str, Any] = {} if group == "filters" else {"type": kind}
    out.update({k: v for k, v in base.items() if k not in managed and k != "type"})
    for field in shown:
        value = field.to_config(values.get(field.name))
        if value is None:
            continue
        head, _, sub = field.key.partition(".")
        if sub:
            out.setdefault(head, {})[sub] = value
        else:
            out[head] = value
    auth = out.get("auth")
    if isinstance(auth, dict):  # only the inputs of the chosen authentication
        wanted = {"basic": ("username", "password"), "bearer": ("token",)}.get(str(auth.get("type")))
        if wanted is None:
            out.pop("auth")
        else:
            out["auth"] = {"type": auth["type"], **{k: auth[k] for k in wanted if k in auth}}
    return out


def _nice_rest(rest: str) -> str:
    """``[1].path`` -> ``row 2: path``."""
    return re.sub(r"^\[(\d+)\]\.?", lambda m: f"row {int(m.group(1)) + 1}: ", rest).rstrip(": ")


def _type_field(label: StrOrPromise, registry: Mapping[str, object], lead: StrOrPromise) -> forms.ChoiceField:
    """The choice of a transform or a delivery: the registry's codes, each explained in the help text."""
    return forms.ChoiceField(
        required=False,
        label=label,
        choices=[(code, code) for code in sorted(registry)],
        help_text=format_lazy(
            "{} {}",
            lead,
            format_lazy(
                " ".join(f"{code}: {{}}" for code in TYPE_HELP if code in registry),
                *(text for code, text in TYPE_HELP.items() if code in registry),
            ),
        ),
    )


def queue_problem(cleaned: dict[str, Any]) -> ServiceError | None:
    """What ``services.validate_queue`` refuses in a form's cleaned queue, or None."""
    try:
        services.validate_queue(
            entity_type=cleaned.get("entity_type", ""),
            trigger=cleaned.get("trigger", ""),
            transform=cleaned.get("transform"),
            delivery=cleaned.get("delivery"),
            filters=cleaned.get("filters"),
        )
    except ServiceError as exc:
        return exc
    return None


class QueueConfigForm(forms.ModelForm):
    """Typed fields for a queue's filters, transform and delivery; mixed into ``ExportQueueForm`` (whose own
    ``clean`` then checks the assembled configuration once more with ``services.validate_queue``)."""

    edit_json = forms.BooleanField(
        required=False,
        label=gettext_lazy("Edit the JSON instead"),
        help_text=gettext_lazy(
            "Ticked: the JSON below is saved as typed and the fields above are ignored. The JSON is what the "
            "REST API takes (docs/exports.md)."
        ),
    )
    transform__type = _type_field(
        gettext_lazy("Transform"), TRANSFORMS, gettext_lazy("How entities become the file or body:")
    )
    delivery__type = _type_field(gettext_lazy("Delivery"), DELIVERIES, gettext_lazy("Where it goes:"))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in ("filters", "transform", "delivery"):
            if name in self.fields:
                self.fields[name].required = False
        self.fields["transform__type"].initial = "identity"
        self.fields["delivery__type"].initial = "webhook"
        if self.instance.pk is not None:
            self.initial.update(config_initial("filters", self.instance.filters))
            self.initial.update(config_initial("transform", self.instance.transform))
            self.initial.update(config_initial("delivery", mask(self.instance.delivery)))
        self.assembled: dict[str, Any] = {}

    @property
    def json_mode(self) -> bool:
        """Whether the raw JSON is what was posted to be saved (ticked, or a post without the typed fields)."""
        return bool(self.data.get("edit_json")) or "transform__type" not in self.data

    @property
    def field_types(self) -> dict[str, dict[str, Any]]:
        """For the page's script: each typed field's group and the types it is shown for."""
        return {f.name: {"group": f.group, "types": list(f.types)} for f in CONFIG_FIELDS if f.group != "filters"}

    def clean_filters(self) -> Any:
        # The typed fields' cleaning, the same on the admin's form and the back-office's.
        return self.cleaned_data.get("filters") or {}

    def clean_delivery(self) -> Any:
        stored = self.instance.delivery if self.instance.pk is not None else None
        return unmask(self.cleaned_data.get("delivery"), stored)

    def clean_concurrency(self) -> int | None:
        value: int | None = self.cleaned_data.get("concurrency")
        try:
            services.validate_concurrency(value)
        except ServiceError as exc:
            raise forms.ValidationError(exc.message) from None
        return value

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if self.json_mode:
            return cleaned
        for name in ("filters", "transform", "delivery"):
            self.errors.pop(name, None)  # the JSON only lends the keys no field shows
        stored_delivery = self.instance.delivery if self.instance.pk is not None else None
        # The keys no field shows come from the JSON posted beside the fields, else from the stored queue.
        base = {
            name: cleaned.get(name) if self.data.get(name) else getattr(self.instance, name, None)
            for name in ("filters", "transform", "delivery")
        }
        try:
            filters = assemble("filters", None, cleaned, base["filters"])
            transform = assemble("transform", cleaned.get("transform__type") or "", cleaned, base["transform"])
            delivery = assemble("delivery", cleaned.get("delivery__type") or "", cleaned, base["delivery"])
        except ServiceError as exc:  # a rows table's JSON (written by the page's script) did not parse
            self.add_error(None, f"{exc.field}: {exc.message}" if exc.field else exc.message)
            return cleaned
        delivery = unmask(delivery, stored_delivery)
        cleaned.update(filters=filters, transform=transform, delivery=delivery)
        self.assembled = {"filters": filters, "transform": transform, "delivery": delivery}
        problem = self.queue_problem(cleaned)
        if problem is not None:
            self.add_typed_error(problem)
        return cleaned

    def queue_problem(self, cleaned: dict[str, Any]) -> ServiceError | None:
        """What ``services.validate_queue`` refuses in the cleaned queue; None too when a field has an error
        already (the queue is not checked as a whole then)."""
        return None if self.errors else queue_problem(cleaned)

    def add_typed_error(self, exc: ServiceError) -> None:
        """``delivery.auth.token`` on the token field, ``transform.columns[1].path`` on the columns table."""
        field = exc.field or ""
        group, _, rest = field.partition(".")
        if group in ("filters", "transform", "delivery") and rest:
            if rest.startswith("auth.") and f"{group}__auth_{rest[5:]}" in self.fields:
                self.add_error(f"{group}__auth_{rest[5:]}", exc.message)
                return
            key = re.split(r"[.\[]", rest, maxsplit=1)[0]
            name = f"{group}__{key}"
            if name in self.fields:
                detail = _nice_rest(rest[len(key) :].lstrip("."))
                self.add_error(name, f"{detail}: {exc.message}" if detail else exc.message)
                return
        if field in self.fields:
            self.add_error(field, exc.message)
        else:
            self.add_error(None, f"{field}: {exc.message}" if field else exc.message)


# The typed fields are declared fields (the admin builds its form class from the fieldsets' names).
QueueConfigForm.base_fields.update({field.name: field.form_field() for field in CONFIG_FIELDS})
QueueConfigForm.declared_fields.update(QueueConfigForm.base_fields)


# A queue's own fields a form edits (the account is the form's, or the admin's choice).
QUEUE_FIELDS = (
    "name",
    "entity_type",
    "enabled",
    "trigger",
    "daily_at",
    "concurrency",
    "filters",
    "transform",
    "delivery",
)
# Digits of an id typed in (an id of a stored entity fits a bigint).
_ID_DIGITS = 18


class QueueForm(QueueConfigForm):
    """One account's queue as a member edits it (the back-office): the queue's fields, the typed configuration,
    the raw JSON beside it, and the entity a preview or a test send renders. Every field works without a script:
    the tables of rows (columns, output keys, headers) are JSON text areas.

    Beyond ``services.validate_queue`` it refuses what saving would: a name the account has, one queue more than
    ``EXPORT_QUEUES_PER_ACCOUNT``, a concurrency out of range; and a destination the outbound guard refuses
    (``services.destination_refusal``), which a member cannot allow."""

    preview_object = forms.CharField(
        required=False,
        max_length=_ID_DIGITS,
        label=gettext_lazy("Entity id"),
        help_text=gettext_lazy(
            "The preview and the test send render this stored entity; empty: the newest of the entity type."
        ),
    )

    class Meta:
        model = ExportQueue
        fields = list(QUEUE_FIELDS)
        widgets = {
            name: forms.Textarea(attrs={"rows": 6, "cols": 80, "spellcheck": "false"})
            for name in ("filters", "transform", "delivery")
        }
        # The model's own words are the admin's; the back-office's are translated.
        labels: dict[str, Any] = {
            "name": gettext_lazy("Name"),
            "entity_type": gettext_lazy("Entity type"),
            "enabled": gettext_lazy("Enabled"),
            "trigger": gettext_lazy("Trigger"),
            "daily_at": gettext_lazy("Daily at"),
            "concurrency": gettext_lazy("Concurrency"),
            "filters": gettext_lazy("Filters"),
            "transform": gettext_lazy("Transform"),
            "delivery": gettext_lazy("Delivery"),
        }
        help_texts: dict[str, Any] = {
            "daily_at": gettext_lazy("Local time of a daily run (account time zone)."),
            "concurrency": gettext_lazy(
                "Deliveries sent at the same time (empty: the service's default). 1 keeps them in order."
            ),
        }

    def __init__(self, *args: Any, account: Account, **kwargs: Any) -> None:
        kwargs.setdefault("instance", ExportQueue(account=account))
        super().__init__(*args, **kwargs)
        self.account = account
        if self.instance.pk is not None:
            self.initial["delivery"] = mask(self.instance.delivery)
        for field in CONFIG_FIELDS:
            if field.kind == "rows":
                self.fields[field.name].widget = forms.Textarea(attrs={"rows": 3, "cols": 80, "spellcheck": "false"})
                self.fields[field.name].help_text += " " + gettext("As JSON.")

    def clean_preview_object(self) -> int | None:
        value = str(self.cleaned_data.get("preview_object") or "").strip()
        if not value:
            return None
        if not value.isdigit():
            raise forms.ValidationError(gettext("Type the id of a stored entity (digits), or leave it empty."))
        return int(value)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        problem = self.queue_problem(cleaned)
        if problem is None and not self.errors:
            problem = services.destination_refusal(delivery=cleaned.get("delivery"))
        if problem is not None:
            self.add_service_error(problem)
        name = cleaned.get("name")
        if name and not self.has_error("name"):
            others = ExportQueue.objects.filter(account=self.account, name=name)
            if self.instance.pk is not None:
                others = others.exclude(pk=self.instance.pk)
            if others.exists():
                self.add_error("name", gettext("A queue with this name exists in the account."))
        if self.instance.pk is None and not self.has_error("name"):
            limit = services.queue_limit_reached(account=self.account)
            if limit is not None:
                self.add_error("name", limit.message)
        return cleaned

    def add_service_error(self, exc: ServiceError) -> None:
        """On the typed field it names; with the JSON edited instead, on that JSON field (as "url: message")."""
        if not self.json_mode:
            self.add_typed_error(exc)
            return
        head, _, rest = (exc.field or "").partition(".")
        if head in self.fields:
            self.add_error(head, f"{rest}: {exc.message}" if rest else exc.message)
        else:
            self.add_error(None, f"{exc.field}: {exc.message}" if exc.field else exc.message)

    def queue_fields(self) -> dict[str, Any]:
        """The cleaned queue as ``services.create_queue`` and ``update_queue`` take it."""
        return {name: self.cleaned_data[name] for name in QUEUE_FIELDS}

    def tried_transform(self) -> dict[str, Any] | None:
        """The transform as typed, for a preview, when it could be read (the other fields need not be valid)."""
        if self.json_mode:
            transform = self.cleaned_data.get("transform") if hasattr(self, "cleaned_data") else None
        else:
            transform = self.assembled.get("transform")
        return transform if isinstance(transform, dict) else None


def pretty(content: str, content_type: str) -> str:
    """JSON indented for reading; anything else as it is."""
    if "json" not in content_type:
        return content
    try:
        return json.dumps(json.loads(content), indent=2, ensure_ascii=False)
    except ValueError:
        return content
