# Two entry points: `make demo` and `make test`. Both start from nothing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUNTIME_STAMP := $(VENV)/.installed-runtime

.PHONY: demo test lint typecheck pytest lit docs clean fuzz browser

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP) $(RUNTIME_STAMP)

# `make demo` needs passflow and its runtime dependencies only; the dev extras
# (`$(STAMP)`, which also satisfies this one) are `make test`'s.
$(RUNTIME_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e .
	touch $(RUNTIME_STAMP)

demo: $(RUNTIME_STAMP)
	BIN=$(BIN) sh examples/demo.sh

pytest: $(STAMP) browser
	$(BIN)/pytest

# tests/test_report_browser.py opens the HTML run report in the system's Chromium
# (Playwright drives it; it downloads no browser of its own).
CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@if [ ! -x $(CHROMIUM) ]; then \
		if ! command -v apt-get >/dev/null 2>&1; then \
			echo "make: $(CHROMIUM) is missing and apt-get is not available:" \
				"install Chromium with your package manager (the report's browser" \
				"test needs it)" >&2; \
			exit 1; \
		fi; \
		echo "installing Chromium for the report's browser test (apt-get)"; \
		$(SUDO) apt-get install -y chromium || \
			{ $(SUDO) apt-get update && $(SUDO) apt-get install -y chromium; }; \
	fi

lit: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/lit -sv tests/filecheck

typecheck: $(STAMP)
	$(BIN)/pyright

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

test: lint typecheck pytest lit docs

# The documentation site (mkdocs.yml): docs/*.md and the API reference generated
# from the docstrings, in site/. --strict makes a broken link or reference an
# error; it needs no network.
docs: $(STAMP)
	$(BIN)/mkdocs build --strict

# The robustness suite at length (docs/robustness.md): FUZZ_SCALE times the
# examples `make test` runs, from a fresh random seed (FUZZ_SEED=N replays one).
FUZZ_SCALE ?= 20
fuzz: $(STAMP)
	PASSFLOW_FUZZ=long PASSFLOW_FUZZ_SCALE=$(FUZZ_SCALE) $(BIN)/pytest tests/robustness \
		--hypothesis-show-statistics $(if $(FUZZ_SEED),--hypothesis-seed=$(FUZZ_SEED))

clean:
	rm -rf $(VENV) build dist src/*.egg-info
