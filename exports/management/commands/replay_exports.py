"""``manage.py replay_exports``: send again what one export queue exported in a time window.

    manage.py replay_exports --account acme --queue "ERP sales" --from 2026-03-01T00:00Z --to 2026-03-02T00:00Z
    manage.py replay_exports --account acme --queue 12 --from 2026-03-01 --to 2026-03-02 --dry-run

The window is [from, to) on the items' creation time; a time without a zone is UTC. See ``exports.replay``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.dateparse import parse_date, parse_datetime

from accounts.models import Account
from exports.models import ExportQueue
from exports.replay import REPLAY_BATCH, replay


def parse_moment(value: str, option: str) -> datetime:
    try:
        moment = parse_datetime(value)
        if moment is None:
            day = parse_date(value)
            moment = datetime(day.year, day.month, day.day) if day is not None else None  # noqa: DTZ001 - UTC below
    except ValueError as exc:
        raise CommandError(f"{option}: {exc}") from exc
    if moment is None:
        raise CommandError(f"{option}: not an ISO 8601 date or date-time: {value!r}")
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class Command(BaseCommand):
    help = "Replay the export items of one queue created in a time window, in new deliveries (new delivery ids)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--account", required=True, help="The account's identifier.")
        parser.add_argument("--queue", required=True, help="The export queue's id or name.")
        parser.add_argument("--from", dest="start", required=True, help="ISO 8601 start, included.")
        parser.add_argument("--to", dest="end", required=True, help="ISO 8601 end, excluded.")
        parser.add_argument("--dry-run", action="store_true", help="Count only; change nothing.")
        parser.add_argument("--batch-size", type=int, default=REPLAY_BATCH, help="Items per transaction.")

    def handle(self, *args: Any, **options: Any) -> None:
        account = Account.objects.filter(identifier=options["account"]).first()
        if account is None:
            raise CommandError(f"no account {options['account']!r}")
        queue = _find_queue(account, options["queue"])
        start, end = parse_moment(options["start"], "--from"), parse_moment(options["end"], "--to")
        if start >= end:
            raise CommandError("--from must be before --to")
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be 1 or more")
        result = replay(
            account=account,
            queue=queue,
            start=start,
            end=end,
            dry_run=options["dry_run"],
            batch=options["batch_size"],
        )
        mode = "dry run: would replay" if options["dry_run"] else "replayed"
        replayable = result.matched - result.pending
        self.stdout.write(
            f"queue {queue.pk} {queue.name!r} ({queue.trigger}), {start.isoformat()} to {end.isoformat()}: "
            f"{result.matched} items in the window, {result.pending} still pending (left alone); "
            f"{mode} {replayable if options['dry_run'] else result.replayed} items"
            + ("" if options["dry_run"] else f" in {result.deliveries} new deliveries")
        )


def _find_queue(account: Account, ref: str) -> ExportQueue:
    queues = ExportQueue.objects.filter(account=account)
    queue = queues.filter(pk=int(ref)).first() if ref.isdigit() else None
    queue = queue or queues.filter(name=ref).first()
    if queue is None:
        raise CommandError(f"no export queue {ref!r} in account {account.identifier!r}")
    return queue
