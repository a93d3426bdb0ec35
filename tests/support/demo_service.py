"""``make run``'s service for end-to-end tests: migrate, ``bootstrap_demo`` and ``runall`` (web, worker, beat and
the embedded broker) on a scratch ``VAR_DIR`` and a free port, whatever database and broker the suite itself uses.

``demo_service(root)`` prepares the service's state under ``root`` as ``make run`` does, starts ``runall`` in a
process group of its own, returns once the web server listens and the worker consumes, and stops it with SIGTERM
when the block ends, failing if it does not exit 0. ``tests/e2e/conftest.py`` shares one for the session.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.ports import free_port
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
# One order for the demo's shop, as an integrator posts it (the curl bootstrap_demo prints posts the same shape).
ORDER = {
    "orders": [
        {
            "order_identifier": "runall-1",
            "basket": {
                "currency": "DKK",
                "line_items": [{"product_identifier": "p1", "name": "Coffee", "quantity": 1, "price": 25.0}],
            },
        }
    ]
}
READY_TIMEOUT_SECONDS = 60.0
STOP_TIMEOUT_SECONDS = 60.0


def demo_env(root: Path) -> dict[str, str]:
    """The environment of ``make run``'s service with its state under ``root`` and a port of its own."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DATABASE_NAME")}
    env.update(
        VAR_DIR=str(root / "var"),
        STATIC_ROOT=str(root / "static"),
        RUN_BIND=f"127.0.0.1:{free_port()}",
        WEB_CONCURRENCY="1",
        WORKER_CONCURRENCY="1",
        PYTHONUNBUFFERED="1",
        OUTBOUND_ALLOWED_NETWORKS="127.0.0.1/32",  # as `make run` sets it: the demo queue delivers to the service
    )
    return env


def migrate(env: dict[str, str]) -> None:
    """``manage.py migrate`` into ``env``'s ``VAR_DIR``: for real the first time in this process, a copy of that
    database afterwards. The same migrations on an empty database write the same database, and each run costs
    a Django start and every migration (about 8 s of CPU on this suite's machine) for nothing new."""
    database = Path(env["VAR_DIR"]) / "db.sqlite3"
    if _migrated_template is not None:
        database.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_migrated_template, database)
        return
    manage(env, "migrate", "--noinput", "-v0")
    _remember_migrated(database)


_migrated_template: Path | None = None


def _remember_migrated(database: Path) -> None:
    global _migrated_template
    folder = Path(tempfile.mkdtemp(prefix="migrated-"))
    atexit.register(shutil.rmtree, folder, True)
    template = folder / "db.sqlite3"
    shutil.copyfile(database, template)
    _migrated_template = template


def manage(env: dict[str, str], *args: str) -> str:
    """``manage.py`` with ``args`` in ``env``; its standard output. Fails the test when it exits non-zero."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def start_runall(env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    """``manage.py runall`` in ``env``, in a process group of its own, its output in ``log_path``."""
    with log_path.open("wb") as log:
        return subprocess.Popen(
            [sys.executable, "manage.py", "runall"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop_runall(process: subprocess.Popen[bytes]) -> int:
    """SIGTERM to runall's process group unless it has ended; its exit status."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    return process.wait(timeout=STOP_TIMEOUT_SECONDS)


@dataclass
class DemoService:
    env: dict[str, str]
    bootstrap_output: str  # what ``bootstrap_demo`` printed: sign-ins, the key, a curl that imports an order
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def base_url(self) -> str:
        return f"http://{self.env['RUN_BIND']}"

    @property
    def api_key(self) -> str:
        return (Path(self.env["VAR_DIR"]) / "demo-api-key").read_text().strip()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@contextmanager
def demo_service(root: Path) -> Iterator[DemoService]:
    env = demo_env(root)
    migrate(env)
    bootstrap_output = manage(env, "bootstrap_demo")
    log_path = root / "runall.log"
    process = start_runall(env, log_path)
    service = DemoService(env=env, bootstrap_output=bootstrap_output, process=process, log_path=log_path)
    try:
        wait_until(
            lambda: process.poll() is not None or (" ready." in service.log() and "Listening at" in service.log()),
            timeout=READY_TIMEOUT_SECONDS,
            message="the worker and the web server to start",
        )
        assert process.poll() is None, f"runall exited with {process.returncode}:\n{service.log()[-5000:]}"
        yield service
    finally:
        code = stop_runall(process)
    assert code == 0, service.log()[-5000:]
