"""Breakers are keyed per endpoint (``acct:<id>|[<use>|]<origin>|<digest>``, and ``...|<origin>|host`` for the
connections to a host): the rows keyed per account and origin (``acct:<id>|<origin>``) are asked by no caller any
more, so they are deleted. No delivery waits on them: a paused delivery is due again at its breaker's reopening
(``next_attempt_at``), and then asks its endpoint's breakers, closed until that endpoint or host fails anew."""

import re

from django.db import migrations

ENDPOINT_KEY = re.compile(r"\|(?:[0-9a-f]{16}|host)$")  # an endpoint's breaker, or its host's connections


def delete_origin_keys(apps, schema_editor):
    CircuitBreaker = apps.get_model("core", "CircuitBreaker")
    stale = [pk for pk, key in CircuitBreaker.objects.values_list("pk", "key") if not ENDPOINT_KEY.search(key)]
    for start in range(0, len(stale), 500):
        CircuitBreaker.objects.filter(pk__in=stale[start : start + 500]).delete()


class Migration(migrations.Migration):
    dependencies = [("core", "0002_live_processes")]

    operations = [migrations.RunPython(delete_origin_keys, migrations.RunPython.noop)]
