# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
HOST ?= 127.0.0.1
PORT ?= 8000
# Where the demo keeps its SQLite database, secret key and address (settings: PRB_DATA_DIR).
DATA_DIR := $(or $(PRB_DATA_DIR),var)

.PHONY: demo test test-postgres lint venv browser clean-demo

# A stamp, not bin/activate: a venv made elsewhere must still get the requirements. The venv's
# own pip installs every wheel here; upgrading it first cost an index round trip per fresh venv.
# The project itself is installed in editable mode (no copy: the venv reads this checkout), so
# `python -m evaluation` and `prb-evaluate` work from any folder; setuptools, pinned in
# requirements.txt, builds it without another download.
STAMP := $(VENV)/.requirements-installed

$(STAMP): requirements.txt pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	@echo "Installing the requirements into $(VENV): about 2 GB (torch, CPU build), 5 to 11 minutes on two cores (README.md)."
	$(PY) -m pip install --quiet --progress-bar off -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

venv: $(STAMP)

## Start the demo: SQLite database in var/, demo data, campaigns and logins, server on
## $(HOST):$(PORT) (make demo PORT=8201 for another port).
# Every participant a person tries on the demo comes from this machine, one network: it may
# make an account for each of them and hold every slot here (a deployment keeps a tenth of
# each, docs/operations.md).
demo: export PRB_SLOT_SHARE_PER_NETWORK ?= 1.0
demo: export PRB_JOIN_SHARE_PER_ADDRESS ?= 1.0
demo: venv
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo_setup --address $(HOST):$(PORT)
	@# The background jobs' worker runs beside the server and stops with it (one line: one shell).
	$(PY) manage.py db_worker --queue-name "*" & worker=$$!; trap 'kill $$worker' EXIT INT TERM; $(PY) manage.py runserver $(HOST):$(PORT)

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

## Reset the demo: remove its SQLite database, secret key and recorded address ($(DATA_DIR)/) and
## the files the README's commands write (out/); the next `make demo` builds it all again. A
## PostgreSQL database named by DATABASE_URL is never touched.
clean-demo:
	@echo "Removing $(DATA_DIR)/ (the demo's SQLite database, secret key and address) and out/ (files the README's commands wrote)."
	rm -rf "$(DATA_DIR)" out
