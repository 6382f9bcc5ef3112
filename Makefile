# Two entry points (see README): `make build` runs the main job, `make test` runs the tests.
# Both create ./.venv and install the package into it on first use.
PYTHON ?= python3
VENV ?= .venv
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[test,mem0]'
	touch $(STAMP)

# Graphiti's embedded FalkorDB (falkordblite) needs Python 3.12+: when a python3.12 is on PATH (or
# installed with pyenv: `pyenv prefix 3.12`), `make test` also runs the Graphiti tests on
# ./.venv312 with the graphiti extra; on the main venv they skip and say why.
# (a pyenv shim on PATH may not run: the first candidate that does is taken)
PYTHON312 ?= $(firstword $(foreach p,$(shell command -v python3.12 2>/dev/null) $(addsuffix /bin/python3.12,$(shell pyenv prefix 3.12 2>/dev/null)),$(shell $(p) -c 'import sys; print("$(p)" if sys.version_info >= (3, 12) else "")' 2>/dev/null)))
VENV312 ?= .venv312
STAMP312 := $(VENV312)/.installed

$(STAMP312): pyproject.toml
	$(PYTHON312) -m venv $(VENV312)
	$(VENV312)/bin/pip install -q --upgrade pip
	$(VENV312)/bin/pip install -q -e '.[graphiti]' 'pytest>=8'
	touch $(STAMP312)

.PHONY: build test test-graphiti
build: $(STAMP)
	$(VENV)/bin/amg build

test: $(STAMP)
	$(VENV)/bin/python -m pytest
ifneq ($(PYTHON312),)
	$(MAKE) test-graphiti
else
	@echo "no python3.12: the Graphiti tests were skipped (they need Python 3.12+)"
endif

test-graphiti: $(STAMP312)
	$(VENV312)/bin/python -m pytest tests/products/test_graphiti.py tests/products/test_graphiti_setup.py
