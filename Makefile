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

.PHONY: build test
build: $(STAMP)
	$(VENV)/bin/amg build

test: $(STAMP)
	$(VENV)/bin/python -m pytest
