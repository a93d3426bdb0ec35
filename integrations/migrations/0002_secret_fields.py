"""Runtime integrations declare their secret query and body values (``secret_fields``).

Existing configurations get the places that were masked by their names until now, so that nothing masked
before reads in plain text after the upgrade, and those the new suggestion adds (``pin``, ``otp``, ...); both
rules are frozen here as they were.
"""

import re

from django.db import migrations, models

_OLD_EXPORT_RULE = re.compile(r"secret|password|passphrase|token|private_key|api[-_]?key|authorization", re.IGNORECASE)
_OLD_INTEGRATION_RULE = re.compile(r"key|sig|auth|pass|secret|token|credential|session|cookie", re.IGNORECASE)


_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_SECRET_WORDS = {"key", "pin", "otp", "pass", "pwd", "sig", "auth", "session", "cookie", "private", "bearer", "hmac"}
_SECRET_WORDS |= {"cvc", "cvv"}
_SECRET_PARTS = ("secret", "token", "passw", "passphrase", "credential", "apikey", "signature", "authoriz")


def _looked_secret(name):
    if _OLD_EXPORT_RULE.search(name) or _OLD_INTEGRATION_RULE.search(name):
        return True
    words = [word.lower() for word in _WORD.findall(name)]
    return any(word in _SECRET_WORDS or any(part in word for part in _SECRET_PARTS) for word in words)


def _body_places(value, path, found):
    if isinstance(value, dict):
        for key, sub in value.items():
            if _looked_secret(str(key)) and not isinstance(sub, dict | list | bool) and sub not in (None, ""):
                found.append(f"{path}.{key}")
            else:
                _body_places(sub, f"{path}.{key}", found)
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            _body_places(sub, f"{path}[{index}]", found)


def declare_what_was_masked(apps, schema_editor):
    RuntimeIntegration = apps.get_model("integrations", "RuntimeIntegration")
    for integration in RuntimeIntegration.objects.all().iterator():
        found = [f"query.{name}" for name, value in (integration.query or {}).items() if _looked_secret(str(name))]
        _body_places(integration.body, "body", found)
        if found:
            integration.secret_fields = found
            integration.save(update_fields=["secret_fields"])


class Migration(migrations.Migration):
    dependencies = [
        ("integrations", "0001_runtime_integrations"),
    ]

    operations = [
        migrations.AddField(
            model_name="runtimeintegration",
            name="secret_fields",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text='Places whose values are secret (masked when read, kept out of logs): "query.<name>", '
                '"body.<key>.<key>", "url.path". Header values (but Accept, Content-Type, User-Agent...) and the '
                "URL's own query values always are. Left empty on a new integration: names that look secret are "
                "suggested.",
            ),
        ),
        migrations.RunPython(declare_what_was_masked, migrations.RunPython.noop),
    ]
