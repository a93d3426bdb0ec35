# make run   installs what the service needs into .venv, migrates, creates the demo account and starts web,
#            worker, beat and the embedded broker.
# make test  installs the development tools too and runs the whole test suite (SQLite and the embedded broker by default;
#            DATABASE_URL and CELERY_BROKER_URL switch to PostgreSQL and Redis).
# make screenshots  runs the admin's browser tests with SCREENSHOTS=1, which saves the main pages to docs/screenshots/,
#            and bench/screenshots.py, which saves the back-office's main pages there at 1280 and 390 px wide.
# make messages  collects the translatable strings of each app of MESSAGE_APPS into its locale/da/LC_MESSAGES/django.po
#            (new ones empty, changed ones fuzzy) and compiles each .po to its .mo (GNU gettext's msgfmt).
# make lint  the import contracts of the layers (lint-imports, pyproject.toml), ruff check, ruff format --check and
#            mypy (django-stubs) on the apps.

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
# Reinstalls only when pyproject.toml changes (or the venv is new). `make run` installs only what the service
# needs; `make test` and `make lint` add the development tools.
STAMP := $(VENV)/.installed-dev
RUN_STAMP := $(VENV)/.installed-run
PIP := $(BIN)/python -m pip install --disable-pip-version-check --quiet --progress-bar off

.PHONY: install install-run run test lint screenshots messages

install: $(STAMP)

install-run: $(RUN_STAMP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(PIP) -e .
	touch $@

$(STAMP): pyproject.toml | $(BIN)/python
	$(PIP) -e '.[dev]'
	touch $(RUN_STAMP) $@

# The demo's export queue delivers to the service's own demo receiver on 127.0.0.1 (docs/security.md).
run: export OUTBOUND_ALLOWED_NETWORKS ?= 127.0.0.1/32
run: install-run
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/python manage.py bootstrap_demo
	$(BIN)/python manage.py runall

# The suite runs in TEST_PROCESSES pytest-xdist workers, each with its own test database and embedded broker: one
# more than the cores, since a worker waiting on a Celery worker, a server or a browser leaves its core to the
# others. `loadgroup` keeps each tier of real processes (e2e, browser) on one worker (tests/conftest.py), so their
# session fixtures start once.
TEST_PROCESSES ?= $(shell $(PYTHON) -c 'import os; print((os.cpu_count() or 1) + 1)')
test: install
	$(BIN)/pytest -n $(TEST_PROCESSES) --dist loadgroup $(PYTEST_ARGS)

screenshots: install
	SCREENSHOTS=1 $(BIN)/pytest -q -p no:cacheprovider tests/browser/test_exports_admin.py tests/browser/test_integrations_admin.py
	$(BIN)/python bench/screenshots.py

# Each app whose texts the back-office shows has its own locale/; run from the app's folder, makemessages collects
# only that app's strings into it. Django is set up from the project's folder first: set up from core/, Celery's
# Django fixup would put core/ on sys.path, where core/secrets.py hides the standard library's secrets.
MESSAGE_APPS := core accounts imports ledger integrations exports backoffice ops
messages: install-run
	for app in $(MESSAGE_APPS); do \
	  DJANGO_SETTINGS_MODULE=config.settings $(BIN)/python -c "import os, django; django.setup(); \
	    from django.core.management import call_command; os.chdir('$$app'); \
	    call_command('makemessages', locale=['da']); call_command('compilemessages', locale=['da'])" \
	    || exit 1; \
	done

lint: install
	$(BIN)/lint-imports --no-cache
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy accounts orders campaigns imports integrations exports ledger giftcards pos backoffice ops config
