# make run   installs into .venv, migrates, creates the demo account and starts web, worker, beat (and the broker).
# make test  installs into .venv and runs the whole test suite (SQLite and the embedded broker by default;
#            DATABASE_URL and CELERY_BROKER_URL switch to PostgreSQL and Redis).
# make lint  ruff check, ruff format --check and mypy (django-stubs) on the apps.

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
# Reinstalls only when pyproject.toml changes (or the venv is new).
STAMP := $(VENV)/.installed

.PHONY: install run test lint

install: $(STAMP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[dev]'
	touch $@

run: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/python manage.py bootstrap_demo
	$(BIN)/python manage.py runall

test: install
	$(BIN)/pytest $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy accounts orders campaigns imports integrations exports ledger giftcards ops config
