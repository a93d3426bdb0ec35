"""A Handlebars compile is charged like a render: path segments and grammar steps are counted before and while
pybars3 compiles, a deadline stops it, and the compiled-template cache cannot be missed into more work than one
bounded compile. Mustache tags have the same cap on path segments. No wall time is asserted: the steps are
counted exactly and the clock is a fake one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from rest_framework.test import APIClient

from exports.models import ExportQueue
from exports.transforms import handlebars
from exports.transforms.base import ConfigError, Element, RenderContext, TransformError
from exports.transforms.handlebars import (
    MAX_COMPILE_UNITS,
    MAX_PATH_SEGMENTS,
    MAX_SEGMENTS,
    HandlebarsTransform,
    TemplateRefused,
    compile_template,
)
from exports.transforms.mustache import MustacheTransform
from tests.support.api import AdminApi, error_fields
from tests.support.clocks import FakeClock
from tests.support.tenants import Tenant

# Slow to compile without a bound (docs/security.md): 1,000 tags of 18 segments (58,000 characters, within the
# size and tag caps) take 13.2 s; one tag of 30,000 segments 14 s.
MANY_LONG_PATHS = ("{{" + ".".join(["ab"] * 18) + "}}\n") * 1000
ONE_TAG_OF_30000_SEGMENTS = "{{" + ".".join(["a"] * 30_000) + "}}"
# Within every cap the whitelist counts (1,000 tags, 2,000 segments), but about 4.5 times the grammar steps of
# the simplest tag each: only the compile's own meter sees its cost.
COSTLY_HELPERS = '{{date a.b "%Y-%m-%d" "Europe/Copenhagen"}}' * 1000


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The sources pybars3 is asked to compile, from an empty cache."""
    handlebars.clear_compiled()
    seen: list[str] = []
    real = handlebars._compile_checked

    def spy(source: str) -> Any:
        seen.append(source)
        return real(source)

    monkeypatch.setattr(handlebars, "_compile_checked", spy)
    yield seen
    handlebars.clear_compiled()


@pytest.fixture
def meters(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every compile meter started, to read what a compile was charged."""
    started: list[Any] = []
    real = handlebars._CompileMeter

    def meter() -> Any:
        started.append(real())
        return started[-1]

    monkeypatch.setattr(handlebars, "_CompileMeter", meter)
    return started


@pytest.mark.parametrize(
    ("template", "message"),
    [
        (MANY_LONG_PATHS, f"more than {MAX_PATH_SEGMENTS} path segments"),
        (ONE_TAG_OF_30000_SEGMENTS, f"more than {MAX_PATH_SEGMENTS} path segments"),
        ("{{a.b.c.d.e.f.g.h}}" * 251, f"at most {MAX_SEGMENTS} path segments"),
        ("{{#each a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q}}{{/each}}", "path segments"),
        ('{{money a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q "EUR"}}', "path segments"),
    ],
)
def test_path_segments_are_counted_before_anything_compiles(template: str, message: str, compiles: list[str]) -> None:
    with pytest.raises(TemplateRefused, match=message):
        compile_template(template)

    assert compiles == []


def test_a_compile_stops_at_its_step_budget(
    monkeypatch: pytest.MonkeyPatch, compiles: list[str], meters: list[Any]
) -> None:
    # The step budget alone decides: on a loaded machine the ten seconds could pass first (the next test's).
    monkeypatch.setattr(handlebars, "COMPILE_TIMEOUT_SECONDS", 3600)
    with pytest.raises(TemplateRefused, match="too costly to compile"):
        compile_template(COSTLY_HELPERS)

    [meter] = meters
    assert meter.units <= MAX_COMPILE_UNITS + 4  # the step that passed the budget is the last one taken
    assert handlebars._compiled == {}


def test_a_compile_stops_at_its_deadline(monkeypatch: pytest.MonkeyPatch, compiles: list[str]) -> None:
    # Every reading of the clock advances it a second: the deadline (10 s) passes at the eleventh reading,
    # taken every 64 grammar steps.
    clock = FakeClock()
    monkeypatch.setattr("exports.transforms.handlebars.time", clock)

    with pytest.raises(TemplateRefused, match="seconds to compile"):
        compile_template("{{identifier}}" * 200)

    assert clock.readings == handlebars.COMPILE_TIMEOUT_SECONDS + 2


def test_the_deadline_counts_the_wait_for_other_compiles(monkeypatch: pytest.MonkeyPatch, compiles: list[str]) -> None:
    # Another thread of the process is compiling (it holds pybars3's one-at-a-time lock) past the deadline.
    monkeypatch.setattr(handlebars, "COMPILE_TIMEOUT_SECONDS", 0.05)
    with handlebars._compile_lock, pytest.raises(TemplateRefused, match="waiting for other templates"):
        compile_template("{{identifier}}")

    assert handlebars._compiled == {}


def test_the_simplest_tags_up_to_the_tag_cap_still_compile(compiles: list[str], meters: list[Any]) -> None:
    compile_template("{{a}}" * handlebars.MAX_TAGS)

    assert meters[0].units <= MAX_COMPILE_UNITS


@pytest.mark.django_db
@pytest.mark.parametrize("template", [MANY_LONG_PATHS, ONE_TAG_OF_30000_SEGMENTS, COSTLY_HELPERS])
def test_the_reproductions_are_refused_at_save_naming_the_template(
    client: APIClient, tenant: Tenant, template: str
) -> None:
    body = {
        "name": "costly",
        "entity_type": "incoming_order_state_changes",
        "trigger": "realtime",
        "transform": {"type": "handlebars", "template": template},
        "delivery": {"type": "webhook", "url": "https://erp.example.com/hook"},
    }

    response = AdminApi(client, tenant).post("export-queues", body)

    assert response.status_code == 400
    assert error_fields(response) == {"transform.template"}
    assert not ExportQueue.objects.exists()


def test_a_stored_costly_template_fails_its_render_without_compiling(
    render_context: RenderContext, compiles: list[str]
) -> None:
    config = {"type": "handlebars", "template": ONE_TAG_OF_30000_SEGMENTS}

    with pytest.raises(TransformError, match="path segments"):
        HandlebarsTransform().render([Element("k", {"a": 1})], render_context, config)

    assert compiles == []


def test_sources_that_compile_the_same_share_one_cache_entry(compiles: list[str]) -> None:
    # pybars3 removes the ~ marks and the blanks they eat before it parses: one compile for all three.
    first = compile_template("{{#each elements}}{{identifier}}{{/each}}")
    second = compile_template("{{#each elements}}  {{~identifier~}}  {{/each}}")
    third = compile_template("{{#each elements}}\t{{~identifier}}{{~/each}}")

    assert first is second is third
    assert len(compiles) == 1


def test_many_distinct_templates_keep_the_cache_bounded(monkeypatch: pytest.MonkeyPatch, compiles: list[str]) -> None:
    monkeypatch.setattr(handlebars, "COMPILED_CACHE_SIZE", 4)

    for n in range(10):
        compile_template(f"{{{{identifier}}}} {n}")
    compile_template("{{identifier}} 9")  # the most recent stays cached

    assert len(handlebars._compiled) == 4
    assert len(compiles) == 10


@pytest.mark.parametrize(
    "template",
    [ONE_TAG_OF_30000_SEGMENTS, "{{#a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q}}{{/a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q}}"],
)
def test_mustache_tags_have_the_same_cap_on_path_segments(template: str) -> None:
    with pytest.raises(ConfigError) as refused:
        MustacheTransform().validate({"type": "mustache", "template": template})

    assert refused.value.field == "template"
    assert "path segments" in refused.value.message
