# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: demo test test-postgres lint venv browser clean-demo

# A stamp, not bin/activate: a venv made elsewhere must still get the requirements. The venv's
# own pip installs every wheel here; upgrading it first cost an index round trip per fresh venv.
STAMP := $(VENV)/.requirements-installed

$(STAMP): requirements.txt
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

venv: $(STAMP)

## Start the demo: SQLite database in var/, demo data, campaigns and logins, server on
## $(HOST):$(PORT) (make demo PORT=8201 for another port).
demo: venv
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo_setup --address $(HOST):$(PORT)
	$(PY) manage.py runserver $(HOST):$(PORT)

## Run the whole test suite (SQLite by default; set DATABASE_URL for PostgreSQL).
test: venv
	$(BIN)/pytest -n 2 --dist loadgroup

test-postgres: venv
	DATABASE_URL=postgres://postgres@127.0.0.1:5432/test $(BIN)/pytest -n 2 --dist loadgroup

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy .

## Debian's Chromium for the browser tests (they skip with a message when it is absent).
browser:
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)
