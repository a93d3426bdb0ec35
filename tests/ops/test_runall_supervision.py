"""``manage.py runall`` supervises its children: a dead worker or beat is started again with backoff, up
to a cap, while the web server keeps serving; SIGTERM stops everything, the embedded broker last.

The end-to-end tests run a real runall on the embedded default (SQLite and the embedded broker in a scratch
VAR_DIR, whatever the suite itself runs on), as tests/support/demo_service.py prepares it.
"""

from __future__ import annotations

import io
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests
from django.core.management import call_command
from django.core.management.base import CommandError

from ops.management.commands.runall import Child, Command, RestartPolicy
from tests.support.demo_service import ORDER, demo_env, manage, migrate, start_runall, stop_runall
from tests.support.waiting import wait_until

STARTED = re.compile(r"runall: (?:re)?started (\w+) \(pid (\d+)\)")


def policy(**overrides: float) -> RestartPolicy:
    values = {"first_delay": 1.0, "max_delay": 8.0, "stable_after": 60.0, "max_restarts": 5, "window": 600.0}
    values.update(overrides)
    return RestartPolicy(**values)  # type: ignore[arg-type]


def test_the_restart_delay_doubles_up_to_the_maximum():
    restarts = policy(max_restarts=100)
    delays = [restarts.after_exit(now=float(n), ran_for=0.5) for n in range(6)]
    assert delays == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]


def test_the_restart_delay_starts_over_after_a_stable_run():
    restarts = policy()
    for n in range(3):
        restarts.after_exit(now=float(n), ran_for=0.5)
    assert restarts.after_exit(now=100.0, ran_for=60.0) == 1.0


def test_runall_gives_up_after_too_many_restarts_within_the_window():
    restarts = policy(max_restarts=3, window=100.0)
    assert [restarts.after_exit(now=float(n), ran_for=0.5) for n in range(3)] == [1.0, 2.0, 4.0]
    assert restarts.after_exit(now=3.0, ran_for=0.5) is None


def test_restarts_older_than_the_window_no_longer_count():
    restarts = policy(max_restarts=3, window=100.0)
    for n in range(3):
        restarts.after_exit(now=float(n), ran_for=0.5)
    assert restarts.after_exit(now=150.0, ran_for=0.5) is not None


# --- A real runall -------------------------------------------------------------------------------------


@dataclass
class Runall:
    process: subprocess.Popen[bytes]
    log_path: Path
    database: Path
    base: str
    import_url: str
    api_query: str
    health_failures: list[str] = field(default_factory=list)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def pids(self) -> dict[str, int]:
        return {name: int(pid) for name, pid in STARTED.findall(self.log())}

    def live(self) -> bool:
        try:
            return requests.get(f"{self.base}/health/live", timeout=5).status_code == 200
        except requests.RequestException:
            return False


@pytest.fixture
def embedded_env(tmp_path: Path) -> dict[str, str]:
    return demo_env(tmp_path)


@pytest.fixture
def runall(embedded_env: dict[str, str], tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Runall]:
    """runall on the embedded default, up (worker ready, web listening); extra environment from the test's
    ``runall_env`` mark. Stopped with SIGTERM at the end, which must end it with status 0."""
    marker = request.node.get_closest_marker("runall_env")
    env = {**embedded_env, **(marker.kwargs if marker else {})}
    migrate(env)
    url = next(line for line in manage(env, "bootstrap_demo").splitlines() if line.startswith("curl ")).split("'")[1]
    log_path = tmp_path / "runall.log"
    process = start_runall(env, log_path)
    running = Runall(
        process=process,
        log_path=log_path,
        database=Path(env["VAR_DIR"]) / "db.sqlite3",
        base=url.split("/imports/")[0],
        import_url=url,
        api_query=url.split("?")[1].replace("stock_location=shop-1&", ""),
    )
    try:
        wait_until(
            lambda: " ready." in running.log() and "Listening at" in running.log(),
            timeout=90,
            message="runall's worker and web server to start",
        )
        yield running
    finally:
        code = stop_runall(process)
    assert code == 0, running.log()[-5000:]
    assert "runall: received SIGTERM, stopping" in running.log()
    socket = Path(env["VAR_DIR"]) / "broker" / "redis.sock"
    assert not socket.exists(), "the embedded broker is stopped (it removes its socket)"


def poll_health(running: Runall, stop: threading.Event) -> threading.Thread:
    def poll() -> None:
        while not stop.wait(0.1):
            if not running.live():
                running.health_failures.append("GET /health/live failed")

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    return thread


def stop_outside_a_write(group: int, database: Path) -> None:
    """SIGSTOP the process group ``group`` at a moment none of it holds ``database``'s write lock.

    The embedded default opens every transaction IMMEDIATE and the worker writes every few seconds (the sweeps,
    the heartbeat); a worker frozen inside one would make every other writer wait for the lock, which is not the
    failure under test. Frozen at a bad moment, it runs on a moment and is frozen again."""
    for _ in range(100):
        os.killpg(group, signal.SIGSTOP)
        probe = sqlite3.connect(database, timeout=0.2)
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.rollback()
            return
        except sqlite3.OperationalError:
            os.killpg(group, signal.SIGCONT)
            time.sleep(0.05)
        finally:
            probe.close()
    raise AssertionError(f"the worker held {database}'s write lock at each of 100 tries")


def materialised(running: Runall) -> bool:
    logs = requests.get(
        f"{running.base}/api/v1/import-logs/?identifier=runall-1&{running.api_query}", timeout=10
    ).json()["results"]
    return [entry["status"] for entry in logs] == ["success"]


@pytest.mark.runall_env(
    RUNALL_RESTART_DELAY_SECONDS="0.5",
    # What the killed worker held is handed over again by beat's sweeper within seconds.
    IMPORT_SWEEP_GRACE_SECONDS="1",
    IMPORT_SWEEP_INTERVAL_SECONDS="2",
)
def test_a_worker_killed_by_sigkill_is_back_within_seconds_and_its_task_is_not_lost(runall: Runall):
    old_worker = runall.pids()["worker"]
    stop = threading.Event()
    poller = poll_health(runall, stop)
    try:
        # The worker (its pool too) stops taking work; the import is published while it cannot run it.
        stop_outside_a_write(old_worker, runall.database)
        answer = requests.post(runall.import_url, json=ORDER, timeout=10)
        assert answer.json() == {"status": "OK", "message": "Import of 1 order(s) initiated"}
        assert not materialised(runall)

        os.kill(old_worker, signal.SIGKILL)
        wait_until(
            lambda: runall.pids()["worker"] != old_worker and runall.log().count(" ready.") >= 2,
            timeout=30,
            message="runall to start a new worker",
        )
        wait_until(lambda: materialised(runall), timeout=60, message="the restarted worker to run the import")
    finally:
        stop.set()
        poller.join(timeout=10)
    assert "runall: worker exited with status -9; restarting it in 0.5s" in runall.log()
    assert runall.process.poll() is None, "runall keeps running"
    assert runall.health_failures == [], "the web server answered throughout"


@pytest.mark.runall_env(RUNALL_RESTART_DELAY_SECONDS="0.2", RUNALL_MAX_RESTARTS="1")
def test_runall_gives_up_on_a_beat_that_keeps_dying_and_the_web_server_keeps_serving(runall: Runall):
    wait_until(lambda: "beat" in runall.pids(), timeout=10, message="beat to start")
    first = runall.pids()["beat"]
    os.kill(first, signal.SIGKILL)
    wait_until(lambda: runall.pids()["beat"] != first, timeout=30, message="runall to start beat again")
    os.killpg(runall.pids()["beat"], signal.SIGKILL)
    wait_until(lambda: "GIVING UP on beat" in runall.log(), timeout=30, message="runall to give up on beat")

    assert runall.process.poll() is None, "runall keeps running"
    assert runall.live()
    answer = requests.post(runall.import_url, json=ORDER, timeout=10)
    assert answer.json()["status"] == "OK"
    wait_until(lambda: materialised(runall), timeout=60, message="the worker to run the import")


def test_runall_refuses_a_var_dir_too_deep_for_the_brokers_socket_and_starts_nothing(settings, tmp_path):
    settings.EMBEDDED_BROKER = True
    settings.EMBEDDED_BROKER_DIR = tmp_path / ("x" * 120)
    with pytest.raises(CommandError, match="choose a shorter VAR_DIR"):
        call_command("runall")


@pytest.mark.runall_env(RUNALL_RESTART_DELAY_SECONDS="0.2")
def test_a_broker_killed_by_sigkill_is_started_again_and_the_worker_takes_tasks_from_it(runall: Runall):
    old_broker = runall.pids()["broker"]
    os.kill(old_broker, signal.SIGKILL)
    wait_until(lambda: runall.pids()["broker"] != old_broker, timeout=30, message="runall to start the broker again")

    answer = requests.post(runall.import_url, json=ORDER, timeout=10)
    assert answer.json()["status"] == "OK"
    wait_until(lambda: materialised(runall), timeout=60, message="the worker, reconnected, to run the import")
    assert runall.process.poll() is None
    assert "runall: restarted worker" not in runall.log(), "the worker reconnects by itself"


def test_a_child_that_reports_an_unrecoverable_error_but_keeps_running_is_killed_and_restarted():
    stuck = "import time; print('consumer: Unrecoverable error: ConnectionError', flush=True); time.sleep(60)"
    child = Child("worker", [sys.executable, "-c", stuck], policy=policy(first_delay=0.1, max_restarts=1))
    command = Command(stdout=io.StringIO())
    command.width = len(child.name)
    command.output_lock = threading.Lock()
    command.env = dict(os.environ)
    stop_signal: list[int] = []
    command._start(child)
    supervisor = threading.Thread(target=command._supervise, args=([child], stop_signal), daemon=True)
    supervisor.start()
    try:
        wait_until(
            lambda: child.given_up, timeout=30, message="runall to kill the stuck child, restart it once, give up"
        )
    finally:
        stop_signal.append(signal.SIGTERM)
        supervisor.join(timeout=10)
        if child.process is not None and child.process.poll() is None:
            child.process.kill()
    output = command.stdout.getvalue()
    assert output.count("worker reported an unrecoverable error; killing it") == 2
    assert "restarted worker" in output
    assert "GIVING UP on worker" in output
