# benchmark_platform: `make setup`, then `make run`. See README.md.
PYTHON ?= python3
VENV := .venv
# optional extras: e.g. `make setup EXTRAS=dev,local-llm` (the local model builds llama.cpp: ~6 min)
EXTRAS ?= dev
BIN := $(VENV)/bin
export DAGSTER_DISABLE_TELEMETRY := 1
# Compiled modules (and pytest's rewritten tests) are cached in __pycache__ (git-ignored): a shell that sets
# PYTHONDONTWRITEBYTECODE would have every process, test worker and Dagster run compile them again (~7 s a worker).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup run lint test check dev db-up db-down bench clean

setup: $(BIN)/benchmark-platform

$(BIN)/benchmark-platform: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/pip install --quiet -e '.[$(EXTRAS)]'
	@touch $@

run: setup
	$(BIN)/benchmark-platform run

# Two pytest processes on the machine's two cores; --dist loadfile keeps each module (and its built database) in one,
# --no-loadscope-reorder hands them out longest first (LONGEST_FIRST in benchmark_platform_tests/conftest.py).
PYTEST := $(BIN)/pytest -q -n 2 --dist loadfile --no-loadscope-reorder

lint: setup
	$(BIN)/ruff format --check --quiet .
	$(BIN)/ruff check --quiet .
	$(BIN)/mypy

# Everything: what .ci/run runs.
test: lint
	$(PYTEST)

# The edit-test loop: lint and the tests not marked slow (whole-graph builds, daemons, Chromium, killed processes).
check: lint
	$(PYTEST) -m "not slow"

dev: setup
	$(BIN)/benchmark-platform dev

db-up: setup
	$(BIN)/benchmark-platform db up

db-down: setup
	$(BIN)/benchmark-platform db down

bench: setup
	@for b in $$(ls benchmark_platform/bench/*.py | xargs -n1 basename | sed 's/\.py$$//' | grep -v '^_'); do \
		echo "== $$b"; $(BIN)/python -m benchmark_platform.bench $$b | tail -n 1; done

clean:
	-$(BIN)/benchmark-platform db down
	rm -rf .local releases
