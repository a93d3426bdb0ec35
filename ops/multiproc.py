"""Prometheus multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``) without one file per worker that ever ran.

prometheus-client keeps each process's counters and histograms in files of their own (``counter_<pid>.db``,
``histogram_<pid>.db``, ...), and every scrape reads every file of the directory. A gunicorn worker recycled after
``max_requests`` leaves its files behind (the client removes only a dead process's live gauges): a web machine
serving for weeks would keep thousands, and each scrape would read them all.

So when gunicorn's master sees a worker exit (``child_exit`` in ``config/gunicorn.conf.py``), ``retire`` adds the
worker's counter, histogram and summary values into one ``<kind>_archive.db`` per kind, key by key (the files
keep each histogram bucket's own count, so adding them is exact), and removes the worker's files: the totals a
scrape adds up are unchanged, and the directory holds the live workers' files and one archive per kind.

A scrape that read the directory between the archive's write and the removal would count the worker twice, and
one between the removal and the write not at all; to Prometheus either is a counter going backwards (a reset, and a
false spike in ``rate()``). ``retire`` holds an exclusive ``flock`` on ``.lock`` in the directory while it works,
and ``ops.metrics.render`` a shared one while it reads.

No Django here: gunicorn's master calls it, configured or not.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from prometheus_client import multiprocess
from prometheus_client.mmap_dict import MmapedDict

__all__ = ("ARCHIVED_KINDS", "files", "locked", "retire")

# The kinds whose values add up across processes (gauges have modes of their own: min, max, live...).
ARCHIVED_KINDS = ("counter", "histogram", "summary")


@contextmanager
def locked(directory: str | Path, *, exclusive: bool) -> Iterator[None]:
    """The directory's lock: shared while a scrape reads the files, exclusive while ``retire`` rewrites them."""
    with open(Path(directory) / ".lock", "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def retire(pid: int, directory: str | Path) -> None:
    """Fold the files of the dead process ``pid`` into the archives and remove them; drop its live gauges."""
    directory = Path(directory)
    with locked(directory, exclusive=True):
        for kind in ARCHIVED_KINDS:
            dead = directory / f"{kind}_{pid}.db"
            if not dead.exists():
                continue
            archive = MmapedDict(str(directory / f"{kind}_archive.db"))
            try:
                for key, value, timestamp, _ in MmapedDict.read_all_values_from_file(str(dead)):
                    total, _ = archive.read_value(key)
                    archive.write_value(key, total + value, timestamp)
            finally:
                archive.close()
            with suppress(FileNotFoundError):
                dead.unlink()
        multiprocess.mark_process_dead(pid, str(directory))  # type: ignore[no-untyped-call]


def files(directory: str | Path) -> list[str]:
    """The metric files a scrape reads (for tests and operators)."""
    return sorted(name for name in os.listdir(directory) if name.endswith(".db"))
