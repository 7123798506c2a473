# Two entry points: `make demo` and `make test`. Both start from nothing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUNTIME_STAMP := $(VENV)/.installed-runtime

.PHONY: demo test lint typecheck pytest lit docs clean fuzz browser test-xdsl-newest xdsl-suite
.PHONY: prerequisites python node servers

# xDSL 0.74 needs Python 3.11: say so before making a venv that cannot install it.
PYTHON_CHECK := import sys; sys.exit(sys.version_info < (3, 11) and \
	"make: passflow needs Python 3.11 or newer (xDSL does); $(PYTHON) is Python %d.%d:" \
	" run make with PYTHON=python3.11 (or newer)" % sys.version_info[:2])

python:
	@$(PYTHON) -c '$(PYTHON_CHECK)'

$(BIN)/python:
	@$(PYTHON) -c '$(PYTHON_CHECK)'
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

# The default suite runs on every CPU this process may use (pytest-xdist; one
# file's tests stay in one worker, which shares its fixtures); PYTEST_JOBS=1
# runs it in one process. The long generated runs are `make fuzz`'s.
PYTEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
PYTEST_PARALLEL = $(if $(filter-out 0 1,$(PYTEST_JOBS)),-n $(PYTEST_JOBS) --dist loadfile)

pytest: $(STAMP) browser servers
	$(BIN)/pytest $(PYTEST_PARALLEL)

# tests/test_report_browser.py opens the HTML run report in the system's Chromium
# (Playwright drives it; it downloads no browser of its own). When it is missing,
# make installs nothing system-wide unasked: it asks on a terminal, installs with
# CHROMIUM_INSTALL=yes, and otherwise stops and prints the command to run.
CHROMIUM := /usr/bin/chromium
CHROMIUM_INSTALL ?=
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
INSTALL_CHROMIUM = $(strip $(SUDO) apt-get install -y chromium)
browser:
	@if [ ! -x $(CHROMIUM) ]; then \
		echo "make: the run report's browser test (tests/test_report_browser.py)" \
			"needs Chromium at $(CHROMIUM)" >&2; \
		if ! command -v apt-get >/dev/null 2>&1; then \
			echo "make: install it with your package manager" >&2; \
			exit 1; \
		fi; \
		answer="$(CHROMIUM_INSTALL)"; \
		if [ -z "$$answer" ] && [ -t 0 ]; then \
			printf "make: install it system-wide now, with '%s'? [y/N] " \
				"$(INSTALL_CHROMIUM)" >&2; \
			read -r answer || answer=; \
		fi; \
		case "$$answer" in \
			y|Y|yes) \
				echo "$(INSTALL_CHROMIUM)"; \
				$(INSTALL_CHROMIUM) || \
					{ $(SUDO) apt-get update && $(INSTALL_CHROMIUM); } ;; \
			*) \
				echo "make: not installing it: run '$(INSTALL_CHROMIUM)'," \
					"or make test CHROMIUM_INSTALL=yes" >&2; \
				exit 1 ;; \
		esac; \
	fi

# tests/test_cache_remote.py runs the remote cache tier against a real
# redis-server and nginx (Debian's redis-server and nginx-light), which it starts
# and stops itself; installed as Chromium is (CHROMIUM_INSTALL=yes), never unasked.
REDIS_SERVER := /usr/bin/redis-server
NGINX := /usr/sbin/nginx
INSTALL_SERVERS = $(strip $(SUDO) apt-get install -y redis-server nginx-light)
servers:
	@if [ ! -x $(REDIS_SERVER) ] || [ ! -x $(NGINX) ]; then \
		echo "make: the remote cache tests (tests/test_cache_remote.py) need" \
			"redis-server and nginx" >&2; \
		case "$(CHROMIUM_INSTALL)" in \
			y|Y|yes) \
				echo "$(INSTALL_SERVERS)"; \
				$(INSTALL_SERVERS) || \
					{ $(SUDO) apt-get update && $(INSTALL_SERVERS); } ;; \
			*) \
				echo "make: not installing them: run '$(INSTALL_SERVERS)'," \
					"or make test CHROMIUM_INSTALL=yes" >&2; \
				exit 1 ;; \
		esac; \
	fi

# pyright runs on Node.js; without it the pyright package would try to download
# a Node.js build of its own, which fails without network.
NODE ?= node
INSTALL_NODE = $(strip $(SUDO) apt-get install -y nodejs)
node:
	@command -v $(NODE) >/dev/null 2>&1 || { \
		echo "make: pyright (make typecheck) needs Node.js on PATH:" \
			"install it, e.g. with '$(INSTALL_NODE)'" >&2; \
		exit 1; }

# What `make test` needs besides PyPI, checked in its first second, before a
# venv is made or anything long runs.
prerequisites: python node browser servers

lit: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/lit -sv tests/filecheck

typecheck: $(STAMP)
	$(BIN)/pyright

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

test: prerequisites lint typecheck pytest lit docs

# The documentation site (mkdocs.yml): docs/*.md and the API reference generated
# from the docstrings, in site/. --strict makes a broken link or reference an
# error; it needs no network.
docs: $(STAMP)
	$(BIN)/mkdocs build --strict

# The robustness suite at length (docs/robustness.md): FUZZ_SCALE times the
# examples `make test` runs, from a fresh random seed (FUZZ_SEED=N replays one);
# the result cache on the whole xDSL corpus (docs/cache.md); and the validity
# oracle on 500 x FUZZ_SCALE generated programs, one worker per CPU
# (docs/conformance.md; FUZZ_SEED is also its first program's seed).
FUZZ_SCALE ?= 20
fuzz: $(STAMP)
	PASSFLOW_FUZZ=long PASSFLOW_FUZZ_SCALE=$(FUZZ_SCALE) \
		$(if $(FUZZ_SEED),PASSFLOW_ORACLE_SEED=$(FUZZ_SEED)) $(BIN)/pytest tests/robustness \
		tests/differential/test_cache_corpus.py tests/differential/oracle \
		--hypothesis-show-statistics $(if $(FUZZ_SEED),--hypothesis-seed=$(FUZZ_SEED))

# The other end of the dependency ranges in pyproject.toml: `make test` runs on
# the lowest xDSL (its dev extras pin nothing lower); this runs on the newest
# xDSL passflow supports and the lowest rich, in a venv of its own: the
# differential against xDSL, the Python API and xDSL-facing tests, the docs'
# programs (type-checked against that xDSL) and the lit suite. (rich's lowest is
# below what import-linter wants: pip says so; lint does not run here.)
XDSL_NEWEST ?= 0.75.0
RICH_LOWEST ?= 13.0.0
NEWEST := .venv-xdsl-newest
NEWEST_BIN := $(NEWEST)/bin
NEWEST_TESTS := tests/differential tests/test_mlir_python_api.py \
	tests/test_public_api.py tests/test_manager.py tests/test_ir.py \
	tests/test_ir_printing.py tests/test_print_options.py tests/test_parse_errors.py \
	tests/test_progress.py tests/test_readme_snippets.py tests/test_docs_shell.py \
	tests/test_xdsl_canaries.py tests/test_xdsl_passes.py \
	tests/test_xdsl_pass_failures.py tests/test_xdsl_user_passes.py \
	tests/test_xdsl_opt_main.py tests/test_xdsl_version.py tests/test_plugins_cli.py

$(NEWEST)/.installed: pyproject.toml
	@$(PYTHON) -c '$(PYTHON_CHECK)'
	$(PYTHON) -m venv $(NEWEST)
	$(NEWEST_BIN)/pip install --quiet --upgrade pip
	$(NEWEST_BIN)/pip install --quiet -e '.[dev]' 'xdsl==$(XDSL_NEWEST)'
	$(NEWEST_BIN)/pip install --quiet 'rich==$(RICH_LOWEST)'
	touch $@

test-xdsl-newest: $(NEWEST)/.installed
	$(NEWEST_BIN)/python -c 'import xdsl, rich.progress; print("xDSL", xdsl.__version__)'
	$(NEWEST_BIN)/pytest $(NEWEST_TESTS)
	PATH="$(CURDIR)/$(NEWEST_BIN):$$PATH" $(NEWEST_BIN)/lit -s tests/filecheck

# xDSL's shipped lit suite (tests/filecheck in the xdsl wheel, its own lit.cfg),
# once with the real xdsl-opt and once with passflow-xdsl-opt as `xdsl-opt`, from
# a scratch folder; prints the counts side by side and the files only xdsl-opt
# passes, and fails if docs/conformance.md does not explain one of them.
# XDSL_SUITE_FLAGS: e.g. --under transforms, --scratch DIR, -j 4, --timeout 20.
XDSL_SUITE_FLAGS ?=
xdsl-suite: $(STAMP)
	$(BIN)/python tests/xdsl_suite/suite.py $(XDSL_SUITE_FLAGS)

clean:
	rm -rf $(VENV) $(NEWEST) build dist src/*.egg-info
