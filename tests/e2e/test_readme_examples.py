"""The README's and docs' examples run as written, in order, in one shell, against ``make run``'s service.

The blocks that run are the fenced ``sh`` blocks right after a ``<!-- runs -->`` line: the README's first, then
each page of ``docs/`` in name order. They run in one ``bash`` (``set -euo pipefail``; ``curl`` fails on an HTTP
error answer) at a scratch directory that stands for the repository's root (``examples/``, and ``var/`` of the
service), against ``make run``'s service (migrate, ``bootstrap_demo``, ``runall``) on a port of its own, which
replaces the README's ``127.0.0.1:8000`` in the blocks and in ``examples/`` (``demo_service``, shared by the
session's end-to-end tests: other tests' orders may be in it). Then the export queue the README
creates has delivered the sales booked after it to the demo receiver.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import requests

from tests.support.demo_service import ROOT, DemoService
from tests.support.waiting import wait_until

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUNS = re.compile(r"^<!-- runs -->\n```sh\n(.*?)^```", re.MULTILINE | re.DOTALL)
DOCUMENTED_ADDRESS = "127.0.0.1:8000"
SCRIPT_TIMEOUT_SECONDS = 60
PRELUDE = """set -euo pipefail
curl() { command curl --fail-with-body "$@"; }
"""


def runnable_blocks() -> list[tuple[str, str]]:
    """(page, block) for every block marked to run, in the order a reader meets them."""
    return [(page.name, block) for page in PAGES for block in RUNS.findall(page.read_text())]


@pytest.fixture
def repository_root(tmp_path: Path, demo_service: DemoService) -> Path:
    """A directory that reads as the repository's root to the blocks: ``examples/`` aimed at the service's port and
    ``var/`` the service's own (the demo's key)."""
    env = demo_service.env
    address = env["RUN_BIND"]
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    for body in (tmp_path / "examples").iterdir():
        body.write_text(body.read_text().replace(DOCUMENTED_ADDRESS, address))
    (tmp_path / "var").symlink_to(env["VAR_DIR"])
    return tmp_path


def test_the_marked_blocks_are_the_readme_and_docs_examples():
    pages = [page for page, _ in runnable_blocks()]
    assert pages[:4] == ["README.md"] * 4, "the key, imports, POS and exports"
    assert {"imports.md", "pos.md"} <= set(pages)


def test_the_examples_run_in_order_and_the_readmes_queue_delivers_to_the_demo_receiver(demo_service, repository_root):
    env = demo_service.env
    blocks = runnable_blocks()
    script = PRELUDE + "".join(
        f"{block.replace(DOCUMENTED_ADDRESS, env['RUN_BIND'])}\nprintf '\\n::ran %s::\\n' {number}\n"
        for number, (_page, block) in enumerate(blocks)
    )
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=repository_root,
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT_SECONDS,
        env={**env, "HOME": str(repository_root)},
    )
    ran = [int(n) for n in re.findall(r"::ran (\d+)::", done.stdout)]
    failed = blocks[len(ran)] if len(ran) < len(blocks) else None
    assert done.returncode == 0 and ran == list(range(len(blocks))), (
        f"block {len(ran)} of {failed[0] if failed else '?'} failed:\n{failed[1] if failed else ''}\n"
        f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-4000:]}"
    )
    out = done.stdout
    assert len(re.findall(r'"status":\s*"OK"', out)) == 2, "both imports were initiated"
    assert len(re.findall(r'"created":\s*true', out)) == 3, "each checkout was booked anew"
    queue = re.search(r"^export queue (\d+)$", out, re.MULTILINE)
    assert queue, out
    assert re.search(r'"element_key":\s*"demo-co-\d+-s1"', out), "the preview shows the sale booked before"

    query = {"account": "demo", "integration": "webshop", "apikey": demo_service.api_key}

    def sales_delivered() -> list[str]:
        items = requests.get(
            f"{demo_service.base_url}/api/v1/export-logs/", params={**query, "queue": queue.group(1)}, timeout=10
        ).json()["results"]
        statuses = [item["status"] for item in items]
        return statuses if statuses == ["success", "success"] else []

    wait_until(sales_delivered, timeout=30, message="the README's queue to deliver the two sales booked after it")
    assert "demo receiver: delivery" in demo_service.log()
