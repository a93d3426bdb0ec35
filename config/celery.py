"""The Celery application: configured from Django settings (``CELERY_*``), tasks found in each app.

Queue routing (``TASK_ROUTING``, on in production) sends imports, real-time exports and cron exports to queues
of their own (``CELERY_TASK_ROUTES`` in the settings); every other task goes to ``CELERY_TASK_DEFAULT_QUEUE``.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
