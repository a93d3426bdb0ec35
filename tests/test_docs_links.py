"""The README and docs/ link only inside the repository, and every such link resolves (a file, or a heading of
it); the only addresses are the local service's own (http://127.0.0.1:8000/...)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# docs/spec/ is a copy of the shared contract, kept as it was written.
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if "spec" not in p.parts)]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)|<(https?://[^>]+)>")


def anchors(page: Path) -> set[str]:
    found = set()
    for heading in re.findall(r"(?m)^#+ (.+)$", page.read_text()):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_stay_inside_the_repository_and_resolve(page: Path) -> None:
    for target, address in LINK.findall(page.read_text()):
        link = target or address
        if link.startswith(("http://", "https://")):
            assert re.match(r"http://127\.0\.0\.1:8000(/|$)", link), f"{page.name}: {link} leaves the repository"
            continue
        if link.startswith("mailto:"):
            continue
        path, _, anchor = link.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.exists(), f"{page.name}: {link} does not exist"
        if anchor and resolved.is_file():
            assert anchor in anchors(resolved), f"{page.name}: {link} names no heading of {resolved.name}"
