# The two quick-start commands: `make demo` and `make test`. Each creates .venv if missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test lint bench rules clean

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

# After editing src/habitus/redact/rules.toml: rewrite its parsed copy (rules.json), which
# loads faster; a test fails while the copy is stale (the TOML is used meanwhile).
rules: $(VENV)/.installed
	$(BIN)/python -c "from habitus.redact.engine import write_rules_json; print(write_rules_json())"

clean:
	rm -rf .demo build dist *.egg-info
