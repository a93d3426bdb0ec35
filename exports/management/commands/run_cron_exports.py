"""``manage.py run_cron_exports``: start the due cron exports now, as beat does every
``EXPORT_CRON_INTERVAL_SECONDS`` (``exports.services.run_cron``), and print what was started.

Safe beside beat and on several machines at once: each (queue, window) pair gets one delivery, whoever starts it;
a window already started is not started again. The deliveries are handed to the workers (the ``exports-cron``
queue), which send them.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.db.models import Count, Max

from exports import services
from exports.models import ExportDelivery


class Command(BaseCommand):
    help = "Start the cron export windows that are due now (hourly and daily queues) and print what was started."

    def handle(self, *args: Any, **options: Any) -> None:
        # The deliveries created after this one are the windows this run (or, at the same instant, beat) started.
        before = ExportDelivery.objects.aggregate(last=Max("pk"))["last"] or 0
        started = services.run_cron()
        if not started:
            self.stdout.write("No cron export was due: every due window was started already or had nothing waiting.")
            return
        rows = (
            ExportDelivery.objects.filter(pk__gt=before)
            .exclude(window="")
            .annotate(n=Count("items"))
            .select_related("account", "queue")
            .order_by("account__identifier", "queue__name")
        )
        self.stdout.write(f"Started {started} cron export window{'s' if started != 1 else ''}:")
        for delivery in rows:
            self.stdout.write(
                f"  {delivery.account.identifier} / {delivery.queue.name}: window {delivery.window}, "
                f"{delivery.n} items, delivery {delivery.delivery_id}"
            )
