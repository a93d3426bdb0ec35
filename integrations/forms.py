"""The typed configuration form of a runtime integration, one for every face that edits one (the admin's and the
back-office's): the fields of ``services.FIELDS``, secrets masked, the service's own checks.

Secrets are masked in the form (``services.masked``) and a masked value submitted back keeps the stored one, by
the same rule as the REST API (``services.unmasked``); the whole configuration is checked by
``services.configuration_errors``, each error on the field it names. The form only checks: saving goes through
``services.save_runtime_integration`` (which records the change in the audit trail) with ``configuration()``.

Query parameters, headers, the body and the declared secret places are JSON text here; the admin draws query
parameters and headers as rows (``integrations.admin``), posting the same JSON.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from integrations import services
from integrations.models import RuntimeIntegration

JSON_WIDGET = forms.Textarea(attrs={"rows": 6, "cols": 90, "class": "vLargeTextField json-config config-code"})


class RuntimeIntegrationForm(forms.ModelForm):
    """A runtime integration's configuration. The account is the instance's (a new one is given as
    ``RuntimeIntegration(account=...)``) or, in the admin, the form's ``account`` field."""

    class Meta:
        model = RuntimeIntegration
        fields = list(services.FIELDS)
        widgets: dict[str, forms.Widget] = {
            "query": JSON_WIDGET,
            "headers": JSON_WIDGET,
            "body": JSON_WIDGET,
            "secret_fields": JSON_WIDGET,
        }
        labels: dict[str, Any] = {"url": "URL"}
        help_texts: dict[str, Any] = {
            "url": "A template, e.g. https://erp.example.com/giftcards/{code}. The chosen kind's placeholders are "
            "listed beside it; they work in the query, the headers and the body too.",
            "query": "Name and value template of each query parameter, e.g. q = {search_term}.",
            "headers": "E.g. Authorization = Bearer your-key. Values (but Accept, Content-Type, User-Agent...) show "
            "as ******** and are kept when saved back unchanged, unless the URL's host changes.",
            "secret_fields": 'E.g. ["query.k", "body.card.pin", "url.path"]: these values show as ******** and stay '
            "out of logs. Left empty on a new integration: names that look secret are filled in.",
            "body": 'A JSON template, e.g. {"amount": "{amount}"} (a string that is exactly one placeholder keeps '
            "the value's type), or null.",
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            self.initial.update(services.masked(self.instance))

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if self.errors:
            return cleaned
        data = {name: cleaned.get(name) for name in services.FIELDS}
        if data["secret_fields"] is None:
            del data["secret_fields"]  # left empty: the suggestion
        # self.instance still holds the stored configuration here (the form's values go in after clean()).
        config = services.unmasked(data, self.instance if self.instance.pk is not None else None)
        cleaned.update(config)
        for error in services.configuration_errors(config):
            head = re.split(r"[.\[]", error["field"], maxsplit=1)[0]
            rest = error["field"][len(head) :].lstrip(".")
            message = f"{rest}: {error['message']}" if rest else error["message"]
            self.add_error(head if head in self.fields else None, message)
        account_id = self.instance.account_id or getattr(cleaned.get("account"), "pk", None)
        if (
            account_id
            and RuntimeIntegration.objects.filter(account_id=account_id, kind=cleaned.get("kind"))
            .exclude(pk=self.instance.pk)
            .exists()
        ):
            self.add_error("kind", gettext("This account already has an integration of this kind: change that one."))
        return cleaned

    def validate_unique(self) -> None:
        # (account, kind) is checked in clean() and by the service with a field-named error.
        pass

    def configuration(self) -> dict[str, Any]:
        """The checked configuration, as ``services.save_runtime_integration`` takes it (secrets unmasked)."""
        return {name: self.cleaned_data[name] for name in services.FIELDS}


class AccountIntegrationForm(RuntimeIntegrationForm):
    """The back-office's form: JSON objects for the query and the headers, texts a member reads, and a URL whose
    host is a literal address must be one the outbound guard connects to (``core.outbound``: public, or inside
    ``OUTBOUND_ALLOWED_NETWORKS``, and plain http only inside those). A host name is not resolved here: the guard
    judges its addresses on every call, and "Test this integration" shows its verdict."""

    class Meta(RuntimeIntegrationForm.Meta):
        widgets: dict[str, forms.Widget] = {
            **RuntimeIntegrationForm.Meta.widgets,
            "url": forms.TextInput(attrs={"class": "config-url"}),
            "transform": forms.Textarea(attrs={"rows": 2, "cols": 90, "class": "config-code"}),
        }
        labels: dict[str, Any] = {
            "kind": _("Kind"),
            "enabled": _("Enabled"),
            "method": _("Method"),
            "url": _("URL"),
            "query": _("Query parameters"),
            "headers": _("Headers"),
            "body": _("Body"),
            "secret_fields": _("Secret places"),
            "timeout": _("Timeout (seconds)"),
            "transform": _("Transform"),
        }
        help_texts: dict[str, Any] = {
            "url": _(
                "A template, e.g. https://erp.example.com/giftcards/{code}: the kind's placeholders may appear in "
                "the path and the query, the host must be literal."
            ),
            "query": _('A JSON object of name and value template, e.g. {"q": "{search_term}"}.'),
            "headers": _(
                'A JSON object of name and value, e.g. {"Authorization": "Bearer your-key"}. Values (but Accept, '
                "Content-Type, User-Agent...) show as ******** and are kept when saved back unchanged, unless the "
                "URL's host changes."
            ),
            "body": _(
                'A JSON template, e.g. {"amount": "{amount}"} (a string that is exactly one placeholder keeps the '
                "value's type), or null. Only with POST."
            ),
            "secret_fields": _(
                'A JSON list, e.g. ["query.k", "body.card.pin", "url.path"]: these values show as ******** and stay '
                "out of logs. Left empty on a new integration: names that look secret are filled in."
            ),
            "timeout": _("From 0.1 to 30 seconds, for connecting and for the answer."),
            "transform": _("A JMESPath expression applied to the JSON answer, or blank."),
        }

    def clean_url(self) -> str:
        url: str = self.cleaned_data["url"]
        problem = services.destination_problem(url)
        if problem:
            raise forms.ValidationError(problem)
        return url
