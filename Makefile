# obs: the two commands of the README are `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint typecheck unit browser check-site check-site-tools snapshots system-deps clean

# obs needs Python 3.11+. A Python too old is refused before a venv is made; a venv made by one (an
# earlier `make demo PYTHON=python3.10`) is made again; a venv this recipe made and could not install
# into is removed, so the next `make` starts over instead of reusing it.
PY_OK := import sys; sys.exit(sys.version_info < (3, 11))

$(STAMP): pyproject.toml
	@$(PYTHON) -c '$(PY_OK)' 2>/dev/null || { \
	  echo "make: obs needs Python 3.11 or newer; $(PYTHON) is $$($(PYTHON) -V 2>&1 | head -n 1). Name another: make demo PYTHON=python3.11" >&2; \
	  exit 2; }
	@if [ -f $(VENV)/pyvenv.cfg ] && ! $(BIN)/python -c '$(PY_OK)' 2>/dev/null; then \
	  echo "make: $(VENV) was made by $$($(BIN)/python -V 2>&1 | head -n 1), which cannot run obs: removing it" >&2; \
	  rm -rf $(VENV); \
	fi
	@made=0; [ -f $(VENV)/pyvenv.cfg ] || made=1; \
	set -x; $(PYTHON) -m venv $(VENV) && $(BIN)/pip install -q --upgrade pip && $(BIN)/pip install -q -e '.[dev]' || { \
	  set +x; \
	  if [ $$made = 1 ]; then echo "make: setting up $(VENV) failed; it is removed, so the next make starts over" >&2; rm -rf $(VENV); fi; \
	  exit 1; }
	touch $(STAMP)

## demo: build the demo site from reports/ into site/
demo: $(STAMP)
	$(BIN)/obs build reports -o site

## test: lint, type-check, unit, build and browser tests (installs what it needs)
test: system-deps $(STAMP) lint typecheck
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests scripts bench
	$(BIN)/ruff format --check src tests scripts bench

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -q tests/unit

browser: system-deps $(STAMP)
	$(BIN)/pytest -q tests/browser

## snapshots: re-take the browser tests' reference images on purpose; look at them, then commit them
snapshots: system-deps $(STAMP)
	OBS_UPDATE_SNAPSHOTS=1 $(BIN)/pytest -q -p no:cacheprovider tests/browser/test_snapshots.py::test_snapshot
	@echo "snapshots: new images in tests/browser/snapshots/ ($$(cat tests/browser/snapshots/chromium-version.txt | tail -1)); look at them, then commit"

## check-site: outside validators (W3C Nu HTML checker, axe-core, links, JS errors, air gap) on the demo site
## The checker is vendored in tools/check_site/ (see its PROVENANCE.md); CHECK_SITE=... runs another copy.
CHECK_SITE       ?= tools/check_site/check-site
CHECK_SITE_NPM   ?= $(HOME)/.cache/check-site
CHECK_SITE_TOOLS ?= axe-core@4.14.1 vnu-jar@26.9.27
check-site: demo check-site-tools
	@if [ ! -x "$(CHECK_SITE)" ]; then \
	  echo "check-site: $(CHECK_SITE) is missing or not executable; it is vendored in tools/check_site/ (see PROVENANCE.md there)" >&2; \
	  exit 2; \
	fi
	$(CHECK_SITE) site

check-site-tools:
	@if [ ! -f $(CHECK_SITE_NPM)/node_modules/axe-core/axe.min.js ] || [ ! -d $(CHECK_SITE_NPM)/node_modules/vnu-jar ]; then \
	  npm install --prefix $(CHECK_SITE_NPM) --no-audit --no-fund --silent $(CHECK_SITE_TOOLS); \
	fi

## system-deps: Debian's Chromium and fonts for the browser tests (never `playwright install`)
system-deps:
	@if [ ! -x /usr/bin/chromium ]; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends \
	    chromium fonts-liberation fonts-dejavu-core; \
	fi

## clean: the demo site is a link (site -> .site.obs/site.<id>): remove the link, its versions and its cache
clean:
	rm -rf site .site.obs .obs-cache build dist .pytest_cache .mypy_cache .ruff_cache
	@echo "clean: kept $(VENV)/ (obs and its tools; rm -rf $(VENV) to reinstall) and bench/corpus/ (the benchmark's corpus, if made)"

## readme-screenshot: the README's picture of a run page, made by the project's own browser code
readme-screenshot: demo
	$(BIN)/python scripts/screenshot.py site runs/spec03-r2/index.html -o build/shots
	cp build/shots/runs_spec03-r2_index-1366x768.png docs/images/run-page.png
