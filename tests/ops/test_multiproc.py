"""Prometheus multiprocess mode: a dead worker's files are folded into one archive per kind (ops.multiproc), the
totals a scrape adds up do not change, and a scrape does not read while the files are rewritten."""

from __future__ import annotations

import fcntl
import os
import runpy
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from ops import metrics, multiproc

# A process in multiprocess mode: ``things`` counted by label, ``waits`` observed; prints its pid.
WORKER = """
import os
from prometheus_client import Counter, Histogram
things = Counter("things", "Things done.", ["kind"])
waits = Histogram("waits", "Waits.", buckets=(0.1, 1.0))
for kind, n in (("a", {a}), ("b", {b})):
    things.labels(kind).inc(n)
for seconds in {waits}:
    waits.observe(seconds)
print(os.getpid())
"""


def run_worker(directory: Path, a: int, b: int, waits: tuple[float, ...]) -> int:
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(directory)}
    script = WORKER.format(a=a, b=b, waits=list(waits))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    return int(done.stdout.strip())


def files_of(pid: int) -> list[str]:
    return [f"counter_{pid}.db", f"histogram_{pid}.db"]


def totals(directory: Path) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(directory))
    text = generate_latest(registry).decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_a_dead_workers_counts_move_to_the_archive_and_the_totals_stay(tmp_path: Path) -> None:
    first = run_worker(tmp_path, a=2, b=1, waits=(0.05, 0.5))
    second = run_worker(tmp_path, a=3, b=0, waits=(5.0,))
    before = totals(tmp_path)
    assert before[("things_total", (("kind", "a"),))] == 5
    assert before[("waits_bucket", (("le", "0.1"),))] == 1
    assert before[("waits_bucket", (("le", "1.0"),))] == 2
    assert before[("waits_count", ())] == 3

    multiproc.retire(first, tmp_path)

    assert multiproc.files(tmp_path) == sorted(["counter_archive.db", "histogram_archive.db", *files_of(second)])
    assert totals(tmp_path) == before

    multiproc.retire(second, tmp_path)
    third = run_worker(tmp_path, a=1, b=1, waits=(0.05,))

    assert multiproc.files(tmp_path) == sorted(["counter_archive.db", "histogram_archive.db", *files_of(third)])
    after = totals(tmp_path)
    assert after[("things_total", (("kind", "a"),))] == 6
    assert after[("things_total", (("kind", "b"),))] == 2
    assert after[("waits_bucket", (("le", "0.1"),))] == 2
    assert after[("waits_count", ())] == 4
    assert after[("waits_sum", ())] == pytest.approx(5.6)


def test_retiring_a_process_without_files_changes_nothing(tmp_path: Path) -> None:
    pid = run_worker(tmp_path, a=1, b=0, waits=())
    before = totals(tmp_path)

    multiproc.retire(pid + 1_000_000, tmp_path)

    assert totals(tmp_path) == before
    assert f"counter_{pid}.db" in multiproc.files(tmp_path)


def test_a_scrape_and_a_rewrite_exclude_each_other(tmp_path: Path) -> None:
    def try_lock(mode: int) -> bool:
        with open(tmp_path / ".lock", "a+b") as other:  # another open file: as another process holds it
            try:
                fcntl.flock(other, mode | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            fcntl.flock(other, fcntl.LOCK_UN)
            return True

    with multiproc.locked(tmp_path, exclusive=True):  # what retire holds
        assert not try_lock(fcntl.LOCK_SH)  # a scrape waits
    with multiproc.locked(tmp_path, exclusive=False):  # what a scrape holds
        assert try_lock(fcntl.LOCK_SH)  # other scrapes read at the same time
        assert not try_lock(fcntl.LOCK_EX)  # retire waits
    assert try_lock(fcntl.LOCK_EX)


@pytest.mark.django_db
def test_the_exposition_adds_up_live_and_retired_workers(tmp_path: Path, settings) -> None:
    retired = run_worker(tmp_path, a=4, b=0, waits=())
    run_worker(tmp_path, a=1, b=0, waits=())
    multiproc.retire(retired, tmp_path)
    settings.PROMETHEUS_MULTIPROC_DIR = str(tmp_path)

    families = {family.name: family for family in text_string_to_metric_families(metrics.render().decode())}

    (sample,) = [s for s in families["things"].samples if s.labels == {"kind": "a"} and s.name == "things_total"]
    assert sample.value == 5


def test_the_masters_hook_logs_a_file_it_cannot_fold_and_goes_on(tmp_path: Path, monkeypatch) -> None:
    # gunicorn's master calls child_exit in its main loop: an exception there would stop it, and the web with it.
    child_exit = runpy.run_path(str(Path(__file__).resolve().parents[2] / "config" / "gunicorn.conf.py"))["child_exit"]
    (tmp_path / "counter_4242.db").mkdir()  # cannot be read as a metrics file
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    server = SimpleNamespace(log=mock.Mock())

    child_exit(server, SimpleNamespace(pid=4242))

    server.log.exception.assert_called_once()
    assert "4242" in str(server.log.exception.call_args)
