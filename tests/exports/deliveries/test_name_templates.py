"""Path, subject and attachment-name templates take the documented placeholders and nothing else: a format spec
(``{date:>400000000}``) would allocate its width before any check, at save and at every render. Refused at save with
the field named, and refused again (without allocating) when a stored template is rendered."""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest

from exports.deliveries.base import (
    MAX_RENDERED_CHARS,
    MAX_TEMPLATE_CHARS,
    ConfigError,
    RenderContext,
    Rendered,
    render_path,
)
from exports.deliveries.email import EmailDelivery
from exports.deliveries.ftp import FtpDelivery
from exports.models import ExportQueue
from tests.support.api import AdminApi, error_fields
from tests.support.servers import SmtpServer

WIDE = "{date:>400000000}"
HUGE = "{date:>" + str(10**12) + "}"
EMAIL = {"type": "email", "recipients": ["ops@acme.example"]}
FTP = {"type": "ftp", "host": "ftp.acme.example", "username": "exporter", "password": "pw"}


def queue_body(delivery: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "templated",
        "entity_type": "incoming_order_state_changes",
        "trigger": "realtime",
        "transform": {"type": "identity"},
        "delivery": delivery,
    }


def peak_bytes_of(call: Any) -> int:
    tracemalloc.start()
    try:
        call()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("delivery", "field"),
    [
        ({**EMAIL, "subject": WIDE}, "delivery.subject"),
        ({**EMAIL, "subject": HUGE}, "delivery.subject"),
        ({**EMAIL, "attachment_name": "{delivery_id:>400000000}.{ext}"}, "delivery.attachment_name"),
        ({**FTP, "path": "exports/" + WIDE + ".json"}, "delivery.path"),
        ({**FTP, "path": "exports/" + HUGE}, "delivery.path"),
        ({**EMAIL, "subject": "{queue!r}"}, "delivery.subject"),
        ({**EMAIL, "subject": "{queue.__class__}"}, "delivery.subject"),
        ({**EMAIL, "subject": "{date:{time}}"}, "delivery.subject"),
        ({**EMAIL, "subject": "x" * (MAX_TEMPLATE_CHARS + 1)}, "delivery.subject"),
    ],
)
def test_a_template_with_a_format_spec_is_refused_at_save_naming_the_field(
    api: AdminApi, delivery: dict[str, Any], field: str
) -> None:
    response = api.post("export-queues", queue_body(delivery))

    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    assert error_fields(response) == {field}
    assert not ExportQueue.objects.exists()


@pytest.mark.django_db
def test_documented_placeholders_and_braces_are_still_accepted(api: AdminApi) -> None:
    delivery = {**EMAIL, "subject": "{{{queue}}} {account} {date} {time}", "attachment_name": "{delivery_id}.{ext}"}

    response = api.post("export-queues", queue_body(delivery))

    assert response.status_code == 201, response.json()


def test_placeholders_render_as_documented(context: RenderContext) -> None:
    text = render_path(
        "{{x}}/{queue}/{queue_id}/{account}/{date}T{time}/{delivery_id}.{ext}",
        context=context,
        delivery_id="d-1",
        extension="csv",
    )

    assert text == "{x}/sales/7/acme/2025-03-04T050607/d-1.csv"


def test_a_stored_wide_subject_sends_nothing_and_allocates_nothing(
    smtp_server: SmtpServer, rendered: Rendered, context: RenderContext
) -> None:
    config = {**EMAIL, "subject": WIDE}
    results = []

    peak = peak_bytes_of(
        lambda: results.append(EmailDelivery().deliver(rendered, config=config, delivery_id="d-1", context=context))
    )

    [result] = results
    assert not result.ok and not result.retryable
    assert result.error.startswith("subject:")
    assert smtp_server.recorder.envelopes == []
    assert peak < 1_000_000  # the width alone would be 400 MB of spaces


def test_a_stored_wide_ftp_path_is_refused_before_connecting(rendered: Rendered, context: RenderContext) -> None:
    # Nothing listens on this host: a send that got past the path would fail on the connection instead.
    config = {**FTP, "host": "127.0.0.1", "port": 9, "path": "exports/" + HUGE}
    results = []

    peak = peak_bytes_of(
        lambda: results.append(FtpDelivery().deliver(rendered, config=config, delivery_id="d-1", context=context))
    )

    [result] = results
    assert not result.ok and result.error.startswith("path:")
    assert peak < 1_000_000


def test_what_a_template_renders_to_is_bounded_as_it_is_built(context: RenderContext) -> None:
    long_name = RenderContext(
        queue={**context.queue, "name": "q" * 1000}, account=context.account, now=context.now, delivery_id="d"
    )

    with pytest.raises(ConfigError) as refused:
        render_path("{queue}" * 5, context=long_name, delivery_id="d", extension="csv", field="subject")

    assert refused.value.field == "subject"
    assert str(MAX_RENDERED_CHARS) in refused.value.message
