# Entry points (see README): `make build` runs the main job, `make test` runs the tests, `make docs`
# builds the documentation site into ./site. Each creates ./.venv on first use: `build` installs
# the toolkit alone, `test` adds the test extras, `docs` the docs extra. pip installs uv into the
# venv first and uv does the rest of the installing (several times faster than pip).
PYTHON ?= python3
VENV ?= .venv
UV := $(VENV)/bin/uv
comma := ,
# $(call install,VENV,ARGS): install ARGS into the virtual environment VENV
install = $(UV) pip install -q --python $(1)/bin/python $(2)

$(VENV)/.installed: pyproject.toml
	@echo "setting up $(VENV) with the toolkit (once; about 30 seconds and 1 GB)"
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check uv
	$(call install,$(VENV),-e .)
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	@echo "adding the test extras (pytest, pytest-xdist, datasets, playwright, mem0, langmem, crowd-kit, mkdocs, ruff) to $(VENV) (once; under a minute)"
	$(call install,$(VENV),-e '.[test$(comma)mem0$(comma)langmem$(comma)crowd]')
	touch $@

# Graphiti's embedded FalkorDB (falkordblite) needs Python 3.12+: when a python3.12 is on PATH (or
# installed with pyenv: `pyenv prefix 3.12`), `make test` also runs the Graphiti tests on
# ./.venv312 with the graphiti extra; on the main venv they skip and say why.
# (a pyenv shim on PATH may not run: the first candidate that does is taken)
PYTHON312 ?= $(firstword $(foreach p,$(shell command -v python3.12 2>/dev/null) $(addsuffix /bin/python3.12,$(shell pyenv prefix 3.12 2>/dev/null)),$(shell $(p) -c 'import sys; print("$(p)" if sys.version_info >= (3, 12) else "")' 2>/dev/null)))
VENV312 ?= .venv312

$(VENV312)/.installed: pyproject.toml $(VENV)/.installed
	@echo "creating $(VENV312) for the Graphiti tests (Python 3.12; once; about 30 seconds and 1 GB)"
	$(PYTHON312) -m venv --without-pip $(VENV312)
	$(call install,$(VENV312),-e '.[graphiti]' 'pytest>=8')
	touch $@

$(VENV)/.installed-docs: $(VENV)/.installed
	@echo "adding the docs extra (MkDocs Material) to $(VENV) (once; about 20 seconds)"
	$(call install,$(VENV),-e '.[docs]')
	touch $@

.PHONY: build test test-all _tests test-graphiti docs
build: $(VENV)/.installed
	$(VENV)/bin/amg build

# `make test` leaves out the few tests marked slow (ten seconds or more each: every docs example,
# real kills and resumes, whole-set measures); `make test-all` runs them too.
test: $(VENV)/.installed-test
	$(MAKE) --no-print-directory _tests MARK='-m "not slow"'
	@echo "the tests marked slow were left out: make test-all runs them too"

test-all: $(VENV)/.installed-test
	$(MAKE) --no-print-directory _tests MARK=

_tests:
	@echo "checking lint and format (ruff)"
	$(VENV)/bin/ruff check --no-cache .
	$(VENV)/bin/ruff format --check --no-cache .
	@echo "running the test suite on every core"
	$(VENV)/bin/python -m pytest -n auto $(MARK)
ifneq ($(PYTHON312),)
	$(MAKE) --no-print-directory test-graphiti
else
	@echo "no python3.12: the Graphiti tests were skipped (they need Python 3.12+)"
endif

docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/python -m mkdocs build --strict
	@echo "the site is in ./site: open site/index.html"

test-graphiti: $(VENV312)/.installed
	@echo "running the Graphiti tests on $(VENV312)"
	$(VENV312)/bin/python -m pytest tests/products/test_graphiti.py tests/products/test_graphiti_setup.py
