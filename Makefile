# Two entry points: `make demo` and `make test`. Both start from nothing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest lit docs clean fuzz

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	BIN=$(BIN) sh examples/demo.sh

pytest: $(STAMP)
	$(BIN)/pytest

lit: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/lit -sv tests/filecheck

typecheck: $(STAMP)
	$(BIN)/pyright

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

test: lint typecheck pytest lit

# The robustness suite at length (docs/robustness.md): FUZZ_SCALE times the
# examples `make test` runs, from a fresh random seed (FUZZ_SEED=N replays one).
FUZZ_SCALE ?= 20
fuzz: $(STAMP)
	PASSFLOW_FUZZ=long PASSFLOW_FUZZ_SCALE=$(FUZZ_SCALE) $(BIN)/pytest tests/robustness \
		--hypothesis-show-statistics $(if $(FUZZ_SEED),--hypothesis-seed=$(FUZZ_SEED))

clean:
	rm -rf $(VENV) build dist src/*.egg-info
