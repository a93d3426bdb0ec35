"""How long a fresh clone's ``make run`` takes to serve, and to deliver the demo's first import.

    .venv/bin/python bench/first_run.py [--ref HEAD] [--cold-pip-cache] [--keep]

Clones this repository (``git clone`` of ``--ref``, from the local repository: no network time for the clone) into
a temporary directory and runs ``make run`` there, as a newcomer would, on a free port (``RUN_BIND``) and without
``DATABASE_URL`` or ``CELERY_BROKER_URL``: the embedded default. It times, from the command's start, the moment
``make`` starts each step (so the virtualenv, the runtime install, migrations, collectstatic and the demo each get
a figure), the first 200 of ``/health/ready`` (web, worker, beat and broker up: served), then posts
``examples/incoming_orders.json`` as the README does and times the moment the export log shows the demo queue's
delivery to the demo receiver.
Then it stops the service with SIGTERM and removes the clone (``--keep`` keeps it).

The install downloads nothing that pip's cache holds already; ``--cold-pip-cache`` turns the cache off
(``PIP_NO_CACHE_DIR``), so every wheel comes from the package index. The machine (CPU, cores, memory, load
average before and after, Python) is printed with the figures: the load tells whether the machine was quiet.
A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness

TIMEOUT_SECONDS = 900.0
POLL_SECONDS = 0.2
# The step make is starting, from the command line it echoes: name of the step that starts -> its pattern.
STEP_PATTERNS = {
    "venv": r"-m venv",
    "install": r"-m pip install",
    "migrate": r"manage\.py migrate",
    "collectstatic": r"manage\.py collectstatic",
    "demo": r"manage\.py bootstrap_demo",
    "runall": r"manage\.py runall",
}
STEPS = tuple((re.compile(pattern), name) for name, pattern in STEP_PATTERNS.items())


def machine() -> str:
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = ""
    with open("/proc/meminfo") as info:
        for line in info:
            if line.startswith("MemTotal"):
                memory = f", {int(line.split()[1]) / 1024 / 1024:.1f} GiB memory"
                break
    return f"{cpu}, {os.cpu_count()} cores{memory}, {platform.system()} {platform.release()}"


def load() -> str:
    return "/".join(f"{value:.2f}" for value in os.getloadavg())


class Output:
    """make's output, read as it comes, each line with its time since the start."""

    def __init__(self, stream, started: float, log_path: Path) -> None:  # type: ignore[no-untyped-def]
        self.lines: list[tuple[float, str]] = []
        self.started = started
        self.log_path = log_path
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream) -> None:  # type: ignore[no-untyped-def]
        with self.log_path.open("w") as log:
            for raw in iter(stream.readline, b""):
                line = raw.decode(errors="replace")
                self.lines.append((time.monotonic() - self.started, line))
                log.write(line)
                log.flush()

    def step_starts(self) -> dict[str, float]:
        found: dict[str, float] = {}
        for at, line in list(self.lines):
            for pattern, name in STEPS:
                if name not in found and pattern.search(line):
                    found[name] = at
        return found

    def tail(self) -> str:
        return "".join(line for _, line in self.lines[-40:])


def wait(condition, process: subprocess.Popen[bytes], output: Output, what: str) -> float:  # type: ignore[no-untyped-def]
    while True:
        if process.poll() is not None:
            raise SystemExit(f"make run exited with {process.returncode} before {what}:\n{output.tail()}")
        try:
            if condition():
                return time.monotonic() - output.started
        except requests.RequestException:
            pass
        if time.monotonic() - output.started > TIMEOUT_SECONDS:
            raise SystemExit(f"no {what} within {TIMEOUT_SECONDS:g} s:\n{output.tail()}")
        time.sleep(POLL_SECONDS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--ref", default="HEAD", help="the commit to clone (default HEAD)")
    parser.add_argument("--cold-pip-cache", action="store_true", help="install without pip's cache")
    parser.add_argument("--keep", action="store_true", help="keep the clone")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="first-run-"))
    clone = scratch / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(harness.ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", args.ref], check=True)
    commit = subprocess.run(
        ["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()

    address = f"127.0.0.1:{harness.free_port()}"
    base = f"http://{address}"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "VAR_DIR", "STATIC_ROOT", "VIRTUAL_ENV", "PYTHONPATH")
    }
    env.update(RUN_BIND=address, PYTHONUNBUFFERED="1")
    if args.cold_pip_cache:
        env["PIP_NO_CACHE_DIR"] = "1"
    load_before = load()

    started = time.monotonic()
    process = subprocess.Popen(
        ["make", "run"],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None
    output = Output(process.stdout, started, scratch / "make-run.log")
    try:
        ready = wait(
            lambda: harness.answers(f"{base}/health/ready"),
            process,
            output,
            "200 from /health/ready",
        )
        key = (clone / "var" / "demo-api-key").read_text().strip()
        auth = {"account": "demo", "integration": "webshop", "apikey": key}
        posted = time.monotonic() - started
        answer = requests.post(
            f"{base}/imports/incoming_orders",
            params={"stock_location": "shop-1", **auth},
            data=(clone / "examples" / "incoming_orders.json").read_bytes(),
            headers={"Content-Type": "application/json"},
            timeout=30,
        )
        answer.raise_for_status()
        delivered = wait(
            lambda: any(
                item["status"] == "success"
                for item in requests.get(f"{base}/api/v1/export-logs/", params=auth, timeout=5).json()["results"]
            ),
            process,
            output,
            "delivery to the demo receiver",
        )
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)

    steps = output.step_starts()
    order = [name for _, name in STEPS if name in steps]
    spans = [
        f"{name} {(steps[order[i + 1]] if i + 1 < len(order) else ready) - steps[name]:.1f} s"
        for i, name in enumerate(order)
    ]
    print(f"machine: {machine()}; load average {load_before} before, {load()} after; Python {sys.version.split()[0]}")
    print(f"commit {commit}; pip cache {'off' if args.cold_pip_cache else 'as this machine has it'}")
    print(f"make run to /health/ready 200: {ready:.1f} s ({', '.join(spans)}; runall until ready included)")
    print(f"first import posted at {posted:.1f} s, delivered to the demo receiver at {delivered:.1f} s")
    if args.keep:
        print(f"clone kept in {clone}, make's output in {scratch / 'make-run.log'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
