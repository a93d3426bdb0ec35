"""Comments and docstrings say what the code does and why, never its history: no Python file of the service, the
tests or the benchmarks names an issue by number (the migrations excepted: they are a record of their time). Read
from the tracked files (``git ls-files``), or from the tree where there is no git checkout."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ISSUE = re.compile(r"\b[Ii]ssue #?[0-9]+")
SKIPPED = {"migrations", "node_modules", "venv", "__pycache__"}


def _python_files() -> list[Path]:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--", "*.py"], cwd=ROOT, capture_output=True, check=True, text=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        found = ROOT.rglob("*.py")
    else:
        found = (ROOT / name for name in listed.split("\0") if name)
    return sorted(
        path
        for path in found
        if path.is_file()
        and not any(part in SKIPPED or part.startswith(".") for part in path.relative_to(ROOT).parent.parts)
    )


def test_no_python_file_names_an_issue_by_number() -> None:
    files = _python_files()
    assert any(path.relative_to(ROOT).parts[0] == "tests" for path in files), "no test file was read"
    places = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if ISSUE.search(line)
    ]
    assert not places, "say what and why, not which issue:\n" + "\n".join(places)
