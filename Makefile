# Two commands on a fresh machine (Python 3.11 and the package registries):
#   make demo   reproduce the seed comparison on the default families, print the table
#   make test   run the whole test suite, the notebooks executed too (what CI runs)
#   (the quick loop while working: `pytest -m "not slow"`, no slow tests, no notebooks)
# Both install the environment first: the package, its tests, and what the notebooks
# are opened and converted with (`.venv/bin/jupyter lab`, `.venv/bin/jupyter nbconvert`).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test fuzz lint bench notebooks clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,notebooks]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/gpusched reproduce seed -o results/seed

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 tests notebooks --nbmake

fuzz: $(STAMP)
	GPUSCHED_HYPOTHESIS=explore $(BIN)/python -m pytest -n 2

notebooks: $(STAMP)
	GPUSCHED_FULL=1 $(BIN)/python notebooks/execute.py --output-dir results/notebooks

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
	find . -path ./$(VENV) -prune -o \( -name '*.nbi' -o -name '*.nbc' \) -exec rm -f {} +
