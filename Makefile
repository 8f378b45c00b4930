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
# The project itself is installed in editable mode (no copy: the venv reads this checkout), so
# `python -m evaluation` and `prb-evaluate` work from any folder; setuptools, pinned in
# requirements.txt, builds it without another download.
STAMP := $(VENV)/.requirements-installed

$(STAMP): requirements.txt pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	@echo "Installing the requirements into $(VENV): a minute or two on a fresh machine, about 2 GB (torch, CPU build)."
	$(PY) -m pip install --quiet --progress-bar off -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
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
