"""The back-office's main pages as PNGs for the docs: ``docs/screenshots/<name>-1280.png`` and ``<name>-390.png``.

    .venv/bin/python bench/screenshots.py [--only NAME ...] [--out docs/screenshots]

A fresh SQLite database in a temporary folder (whatever ``DATABASE_URL`` says), migrated, with the demo account
of ``manage.py bootstrap_demo`` and its owner (owner@example.com, password ``owner``); the demo account gets the
browser tests' showcase (``tests/support/showcase.py``): orders through the import API, one rejected, their exports
delivered to a receiver on 127.0.0.1 (delivered, failed, waiting for a retry), sales with warnings through the POS
API. Django's live server serves it in this process, headless Chromium (``/usr/bin/chromium`` or
``CHROMIUM_PATH``) signs in through the form and saves each page of ``PAGES`` as the window shows it (1280 x 800
and 390 x 844, not the whole page), in English. A new page is one line of ``PAGES``. Not a benchmark.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness

# (name, path): the path's {fields} are the showcase's objects (see ``targets``).
PAGES: list[tuple[str, str]] = [
    ("dashboard", "/backoffice/"),
    ("export-queues", "/backoffice/exports/queues/"),
    ("export-queue", "/backoffice/exports/queues/{queue}/"),
    ("export-queue-edit", "/backoffice/exports/queues/{queue}/edit/"),
    ("export-log", "/backoffice/exports/log/"),
    ("export-item", "/backoffice/exports/log/{failed_item}/"),
    ("import-log", "/backoffice/imports/"),
    ("import-item", "/backoffice/imports/{rejected_import}/"),
    ("sales", "/backoffice/sales/?warnings=1"),
    ("sale", "/backoffice/sales/{warned_sale}/"),
    ("integration-new", "/backoffice/integrations/new/"),
    ("pricing", "/backoffice/pricing/"),
    ("statements", "/backoffice/statements/"),
    ("statement", "/backoffice/statements/{statement}/"),
    ("notifications", "/backoffice/notifications/"),
    ("security", "/backoffice/security/"),
]
WIDTHS = {1280: 800, 390: 844}
OWNER = "owner@example.com"
OWNER_PASSWORD = "owner"  # noqa: S105 - the demo owner's, as bootstrap_demo prints it


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=[], help="names of PAGES to save (default: every page)")
    parser.add_argument("--out", type=Path, default=harness.ROOT / "docs" / "screenshots")
    args = parser.parse_args()
    unknown = set(args.only) - {name for name, _ in PAGES}
    if unknown:
        parser.error(f"no such page: {', '.join(sorted(unknown))}")
    chromium = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
    if not os.access(chromium, os.X_OK):
        parser.error(f"no Chromium at {chromium}: install it (apt-get install chromium) or set CHROMIUM_PATH")

    folder = Path(tempfile.mkdtemp(prefix="screenshots-"))
    try:
        return shoot(folder, chromium, [(n, p) for n, p in PAGES if not args.only or n in args.only], args.out)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def shoot(folder: Path, chromium: str, pages: list[tuple[str, str]], out: Path) -> int:
    from ops.embedded_broker import EmbeddedBroker

    broker = EmbeddedBroker(folder / "broker")  # the imports hand their work to it; no worker takes it
    broker.start()
    os.environ.update(
        harness.local_env(
            folder,
            DATABASE_URL=f"sqlite:///{folder / 'db.sqlite3'}",
            CELERY_BROKER_URL=broker.url,
            DEMO_RECEIVER="false",
            DJANGO_ALLOW_ASYNC_UNSAFE="true",  # Playwright's sync API runs an event loop in this thread
        )
    )
    try:
        import django

        django.setup()
        from django.contrib.staticfiles.handlers import StaticFilesHandler
        from django.core.management import call_command
        from django.test.testcases import LiveServerThread
        from playwright.sync_api import sync_playwright

        call_command("migrate", verbosity=0)
        call_command("bootstrap_demo", stdout=io.StringIO())
        targets = showcase_targets()

        server = LiveServerThread("127.0.0.1", StaticFilesHandler, port=0)
        server.daemon = True
        server.start()
        server.is_ready.wait()
        if server.error:
            raise server.error
        try:
            out.mkdir(parents=True, exist_ok=True)
            base = f"http://127.0.0.1:{server.port}"
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
                for width, height in WIDTHS.items():
                    context = browser.new_context(
                        base_url=base, viewport={"width": width, "height": height}, locale="en-US"
                    )
                    page = context.new_page()
                    page.goto("/backoffice/login/")
                    page.get_by_label("E-mail").fill(OWNER)
                    page.get_by_label("Password").fill(OWNER_PASSWORD)
                    page.get_by_role("button", name="Sign in").click()
                    page.wait_for_url(f"{base}/backoffice/")
                    for name, path in pages:
                        page.goto(path.format(**targets))
                        target = out / f"{name}-{width}.png"
                        page.screenshot(path=str(target), animations="disabled")
                        print(f"{target.relative_to(harness.ROOT) if target.is_relative_to(harness.ROOT) else target}")
                    context.close()
                browser.close()
        finally:
            server.terminate()
    finally:
        broker.stop()
    return 0


def showcase_targets() -> dict[str, int]:
    """The demo account's showcase, made once; the ids the pages' paths name."""
    from accounts.models import Account, Integration, Market, StockLocation
    from ops.management.commands.bootstrap_demo import DEMO_ACCOUNT, DEMO_INTEGRATION
    from tests.factories import api_key_for
    from tests.support import showcase
    from tests.support.receivers import running_receiver
    from tests.support.tenants import Tenant

    account = Account.objects.get(identifier=DEMO_ACCOUNT)
    integration = Integration.objects.get(account=account, identifier=DEMO_INTEGRATION)
    tenant = Tenant(
        account=account,
        integration=integration,
        market=Market.objects.get(account=account, identifier="dk"),
        stock_location=StockLocation.objects.get(account=account, identifier="shop-1"),
        imports_key=api_key_for(integration, "imports"),
        admin_key=api_key_for(integration, "admin"),
        pos_key=api_key_for(integration, "pos"),
    )
    with running_receiver() as receiver:
        shown = showcase.fill(tenant, receiver)
    return {
        "queue": shown.queue.pk,
        "failed_item": shown.failed[0].pk,
        "rejected_import": shown.rejected_import.pk,
        "warned_sale": shown.warned_sale.pk,
        "statement": shown.statement.pk,
    }


if __name__ == "__main__":
    raise SystemExit(main())
