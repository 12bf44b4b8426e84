# Annals — two commands: `make run` and `make test`. Both bootstrap .venv themselves.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: run test lint fmt bench install clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q 'pip>=23,<26.3'  # chalice 1.34 pins pip below 26.3
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/annals serve --host $(HOST) --port $(PORT)

INFRA_STAMP := $(VENV)/.infra-stamp

$(INFRA_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[dev,infra]'
	@touch $(INFRA_STAMP)

test: $(STAMP) $(INFRA_STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -n 2 --dist loadfile

lint: $(STAMP)
	$(BIN)/ruff check .

fmt: $(STAMP)
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/annals bench locomo ../shared/data/locomo/*.json

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build *.egg-info
