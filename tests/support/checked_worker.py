"""``python -m tests.support.checked_worker <celery arguments>``: a Celery worker whose identity and simple JSON
exports are validated against their published schemas (``tests.support.export_checks``), each outcome appended to
the file named by ``EXPORT_CHECK_REPORT`` for the test process to read. Without that variable: a plain worker."""

from __future__ import annotations

import os
from pathlib import Path

from celery.__main__ import main

from tests.support.export_checks import REPORT_ENV, ExportCheck, install

if __name__ == "__main__":
    if os.environ.get(REPORT_ENV):
        install(ExportCheck(report=Path(os.environ[REPORT_ENV])))
    main()
