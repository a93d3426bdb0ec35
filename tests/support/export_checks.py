"""Every identity and simple JSON export the test suite renders is validated against its published schema.

``install`` wraps the identity transform's ``render`` and ``render_to`` and the simple JSON transform's ``render``:
each output of a queue's render (its ``RenderContext`` names the entity type) is parsed and validated against the
JSON Schema ``exports.outputs.describe`` publishes for that entity type and configuration (for identity: the
OpenAPI document's ``Export<Entity>`` wrapper), each schema compiled once. A render without an entity type (a test
calling a transform on made-up elements) is counted, not checked, and so is every render of a test marked
``made_up_entities`` (one that names an entity type for elements that are not of it).

In the test process, ``ExportCheckPlugin`` fails the test during which an invalid export was rendered and prints
the counts in the terminal summary. A Celery worker started by the end-to-end tests runs ``tests.support.
checked_worker``, which installs the same check and appends one JSON line per export to the file named by
``EXPORT_CHECK_REPORT``; the plugin reads it after each test.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPORT_ENV = "EXPORT_CHECK_REPORT"
Wrapper = Generator[None, object, object]  # a new-style hook wrapper
# A streamed export larger than this is counted as too large to check, not read back.
MAX_CHECKED_BYTES = 32 * 1024 * 1024
MAX_PROBLEMS_SHOWN = 5


@dataclass
class ExportCheck:
    """The validators, compiled once per schema, and what was found."""

    validated: Counter[str] = field(default_factory=Counter)  # "<transform> <entity type>" -> exports
    unchecked: Counter[str] = field(default_factory=Counter)  # why -> exports
    problems: list[str] = field(default_factory=list)
    report: Path | None = None  # a worker process: append each outcome here instead
    not_checked: str | None = None  # why the current test's renders are not checked, if they are not
    _validators: dict[tuple[str, str, str], Any] = field(default_factory=dict)

    def validator(self, code: str, entity_type: str, transform: dict[str, Any]) -> Any:
        import jsonschema_rs

        from exports import outputs

        key = (code, entity_type, outputs.schema_key(transform) if code != "identity" else "")
        found = self._validators.get(key)
        if found is None:
            schema = outputs.describe(entity_type=entity_type, transform=transform)["json_schema"]
            found = self._validators[key] = jsonschema_rs.Draft202012Validator(schema)
        return found

    def check(self, code: str, context: Any, config: dict[str, Any], content: Callable[[], bytes | None]) -> None:
        """Validate one render's output; a failure of the check itself is a problem too, never the render's."""
        try:
            self._check(code, context, config, content)
        except Exception as error:  # reported as the test's failure, never raised into the render
            self.outcome(code, "?", [f"the check failed: {type(error).__name__}: {error}"], None)

    def _check(self, code: str, context: Any, config: dict[str, Any], content: Callable[[], bytes | None]) -> None:
        if self.not_checked is not None:
            self.outcome(code, None, [], self.not_checked)
            return
        entity_type = context.queue.get("entity_type") if isinstance(context.queue, dict) else None
        if not entity_type:
            self.outcome(code, None, [], "without an entity type")
            return
        body = content()
        if body is None:
            self.outcome(code, entity_type, [], "too large to read back")
            return
        try:
            instance = json.loads(body)
        except ValueError as error:
            self.outcome(code, entity_type, [f"not JSON: {error}"], None)
            return
        validator = self.validator(code, entity_type, config)
        problems = [
            f"/{'/'.join(map(str, error.instance_path))}: {error.message[:300]}"
            for _, error in zip(range(MAX_PROBLEMS_SHOWN), validator.iter_errors(instance), strict=False)
        ]
        self.outcome(code, entity_type, problems, None)

    def outcome(self, code: str, entity_type: str | None, problems: list[str], unchecked: str | None) -> None:
        if self.report is not None:
            line = {"code": code, "entity_type": entity_type, "problems": problems, "unchecked": unchecked}
            with self.report.open("a", encoding="utf-8") as report:
                report.write(json.dumps(line) + "\n")
            return
        self.add(code, entity_type, problems, unchecked)

    def add(self, code: str, entity_type: str | None, problems: list[str], unchecked: str | None) -> None:
        if unchecked is not None:
            self.unchecked[f"{code} {unchecked}"] += 1
            return
        self.validated[f"{code} {entity_type}"] += 1
        if problems:
            found = "\n  ".join(problems)
            self.problems.append(f"a {code} export of {entity_type} does not match its schema:\n  {found}")


def install(check: ExportCheck) -> Callable[[], None]:
    """Wrap the transforms' renders with ``check``; returns the undo."""
    from exports.transforms.identity import IdentityTransform
    from exports.transforms.simple_json import SimpleJsonTransform

    render, render_to, simple_render = (
        IdentityTransform.render,
        IdentityTransform.render_to,
        SimpleJsonTransform.render,
    )

    def identity_render(self: Any, elements: Any, context: Any, config: Any) -> Any:
        rendered = render(self, elements, context, config)
        check.check("identity", context, config, lambda: rendered.content)
        return rendered

    def identity_render_to(self: Any, elements: Any, context: Any, config: Any, out: Any) -> Any:
        start = out.tell()
        rendered = render_to(self, elements, context, config, out)

        def content() -> bytes | None:
            end = out.tell()
            try:
                if end - start > MAX_CHECKED_BYTES:
                    return None
                out.seek(start)
                return bytes(out.read(end - start))
            finally:
                out.seek(end)

        check.check("identity", context, config, content)
        return rendered

    def simple_json_render(self: Any, elements: Any, context: Any, config: Any) -> Any:
        rendered = simple_render(self, elements, context, config)
        check.check("simple_json", context, config, lambda: rendered.content)
        return rendered

    IdentityTransform.render = identity_render  # type: ignore[method-assign]
    IdentityTransform.render_to = identity_render_to  # type: ignore[method-assign]
    SimpleJsonTransform.render = simple_json_render  # type: ignore[method-assign]

    def undo() -> None:
        IdentityTransform.render = render  # type: ignore[method-assign]
        IdentityTransform.render_to = render_to  # type: ignore[method-assign]
        SimpleJsonTransform.render = simple_render  # type: ignore[method-assign]

    return undo


class ExportCheckPlugin:
    """The session's check (registered by ``tests/conftest.py``)."""

    def __init__(self) -> None:
        self.check = ExportCheck()
        handle, name = tempfile.mkstemp(prefix="export-check-", suffix=".jsonl")
        os.close(handle)
        self.report = Path(name)
        self.read_to = 0
        self.from_workers = 0
        os.environ[REPORT_ENV] = str(self.report)  # the workers' environment is this process's
        self.undo = install(self.check)

    def close(self) -> None:
        self.undo()
        self.report.unlink(missing_ok=True)

    def read_worker_reports(self) -> None:
        with self.report.open("rb") as report:
            report.seek(self.read_to)
            data = report.read()
        complete = data[: data.rfind(b"\n") + 1]
        self.read_to += len(complete)
        for line in complete.splitlines():
            outcome = json.loads(line)
            self.check.add(outcome["code"], outcome["entity_type"], outcome["problems"], outcome["unchecked"])
            self.from_workers += outcome["unchecked"] is None

    def take_problems(self) -> list[str]:
        self.read_worker_reports()
        problems = list(self.check.problems)
        self.check.problems.clear()
        return problems

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Wrapper:
        if item.get_closest_marker("made_up_entities") is not None:
            self.check.not_checked = "of made-up entities (a test marked made_up_entities)"
        try:
            return (yield)
        finally:
            self.check.not_checked = None

    def fail_on_problems(self) -> None:
        """Fail the test phase that just ran with every problem found in it."""
        problems = self.take_problems()
        if problems:
            pytest.fail("\n".join(problems), pytrace=False)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Wrapper:
        result = yield
        self.fail_on_problems()
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Wrapper:
        result = yield
        self.fail_on_problems()
        return result

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        self.read_worker_reports()
        validated = self.check.validated
        if not validated and not self.check.unchecked:
            return
        by_transform = Counter[str]()
        for key, count in validated.items():
            by_transform[key.split(" ")[0]] += count
        terminalreporter.write_sep("-", "exports validated against their published schemas")
        kinds = ", ".join(f"{code}: {count}" for code, count in sorted(by_transform.items())) or "none"
        types = ", ".join(sorted({key.split(" ")[1] for key in validated}))
        terminalreporter.write_line(
            f"{sum(validated.values())} exports validated ({kinds}; {self.from_workers} of them rendered by Celery "
            f"workers), of the entity types {types or '-'}"
        )
        for why, count in sorted(self.check.unchecked.items()):
            terminalreporter.write_line(f"{count} {why}: not checked")
