"""What the POS benchmarks share (``bench/fairness_pos.py``, ``bench/first_request.py``): a database of their own
with POS tenants whose ``customer_discounts`` integration points at a reference integrator, and a real gunicorn
started with the project's own ``config/gunicorn.conf.py`` (plus a hook that reports each worker ready).

Not a benchmark itself.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness

TENANT = """
import json
from accounts import services
from accounts.models import Scope
from integrations.models import RuntimeIntegration

out = {}
for identifier, url in json.loads(%r).items():
    account, integration = services.ensure_account_and_integration(
        account_identifier=identifier, integration_identifier="webshop"
    )
    services.ensure_demo_structure(account=account)
    _, key = services.create_api_key(account=account, integration=integration, scopes=[Scope.POS])
    RuntimeIntegration.objects.update_or_create(
        account=account,
        kind="customer_discounts",
        defaults={"url": url + "/customers/{customer_id}/discounts", "timeout": 5,
                  "query": {"market": "{market}", "currency_code": "{currency_code}"}},
    )
    out[identifier] = key
print(json.dumps(out))
"""

# A till's basket: the customer's discount (the reference integrator's: product p-1 at 79) applies to the first line.
LINES = [
    {"line_item_id": "li-1", "id": "p-1", "quantity": 2, "unit_price": 100},
    {"line_item_id": "li-2", "id": "p-2", "quantity": 1, "unit_price": 49.95, "tags": ["socks"]},
    {"line_item_id": "li-3", "id": "p-3", "quantity": 3, "unit_price": 12.5},
]


def environment(folder: Path) -> dict[str, str]:
    """The environment of every process of a run (``harness.local_env``), with the filesystem broker (nothing
    here is queued)."""
    return harness.local_env(folder, CELERY_BROKER_URL=f"filesystem://{folder / 'broker'}")


def prepare(env: dict[str, str], tenants: dict[str, str]) -> dict[str, str]:
    """Migrate, and create each tenant (identifier -> reference integrator URL): account, market ``dk``, a POS
    key, the ``customer_discounts`` integration. Returns identifier -> POS key."""
    harness.migrate(env)
    out = harness.manage(env, "shell", "-c", TENANT % json.dumps(tenants))
    keys: dict[str, str] = json.loads(out.strip().splitlines()[-1])
    return keys


def gunicorn_config(folder: Path, root: Path) -> Path:
    """A gunicorn configuration file: ``root``'s ``config/gunicorn.conf.py`` as it is, plus a ``post_worker_init``
    (after the project's own, if any) that writes ``ready-<pid>`` into ``folder`` once a worker can serve, holding
    the moment (``CLOCK_BOOTTIME``)."""
    path = folder / "gunicorn.bench.conf.py"
    path.write_text(
        f"""import os as _os
import runpy as _runpy
import time as _time

_base = _runpy.run_path({str(root / "config" / "gunicorn.conf.py")!r})
globals().update({{name: value for name, value in _base.items() if not name.startswith("_")}})
_own_post_worker_init = _base.get("post_worker_init")


def post_worker_init(worker):
    if _own_post_worker_init is not None:
        _own_post_worker_init(worker)
    with open(_os.path.join({str(folder)!r}, f"ready-{{_os.getpid()}}"), "w") as ready:
        ready.write(str(_time.clock_gettime(_time.CLOCK_BOOTTIME)))
"""
    )
    return path


def start_gunicorn(
    children: Any, env: dict[str, str], folder: Path, root: Path, port: int, extra_env: dict[str, str] | None = None
) -> Any:
    """gunicorn with ``root``'s configuration (worker class, threads, preload as the environment says) on
    127.0.0.1:``port``, run from ``root`` (its code is imported)."""
    config = gunicorn_config(folder, root)
    children.env = {**env, "GUNICORN_BIND": f"127.0.0.1:{port}", **(extra_env or {})}
    children.log_dir = folder
    return children.start("web", [sys.executable, "-m", "gunicorn", "-c", str(config), "config.wsgi"], cwd=root)


def boot_seconds(folder: Path, pid: int) -> float:
    """From the worker's fork (its start time in /proc, 10 ms resolution) until it reported ready."""
    ready = float((folder / f"ready-{pid}").read_text())
    started_ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    return ready - started_ticks / os.sysconf("SC_CLK_TCK")


def ready_workers(folder: Path) -> set[int]:
    return {int(path.name.split("-", 1)[1]) for path in folder.glob("ready-*")}


def wait_ready(folder: Path, count: int, child: Any, timeout: float = 120) -> set[int]:
    deadline = time.monotonic() + timeout
    while len(ready := ready_workers(folder)) < count:
        child.check_alive()
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(ready)} of {count} gunicorn workers ready after {timeout:g} s:\n{child.log()}")
        time.sleep(0.01)
    return ready


def basket(customer: str) -> bytes:
    return json.dumps({"market": "dk", "customer": {"identifier": customer}, "line_items": LINES}).encode()


def price(session: requests.Session, base: str, tenant: str, key: str, customer: str) -> requests.Response:
    return session.post(
        f"{base}/api/v1/pos/baskets/price",
        params={"account": tenant, "integration": "webshop", "apikey": key},
        data=basket(customer),
        headers={"Content-Type": "application/json"},
        timeout=60,
    )
