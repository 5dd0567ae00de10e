# The two quick-start commands: `make demo` and `make test`. Each creates .venv if missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

demo: $(VENV)/.installed
	$(BIN)/python examples/demo.py

test: $(VENV)/.installed
	$(BIN)/python -m pytest

lint: $(VENV)/.installed
	$(BIN)/ruff check src tests bench examples
	$(BIN)/mypy src/habitus

bench: $(VENV)/.installed
	$(BIN)/python bench/scan.py --mb 100
	$(BIN)/python bench/redact.py

clean:
	rm -rf .demo build dist *.egg-info
