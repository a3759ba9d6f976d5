# Two entry points for a fresh machine with python3 (3.11+) and make:
#   make run    set up .venv and run `dicelab simulate --strategy threshold-300`
#   make test   set up .venv and run the whole test suite (what CI runs)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup run test lint bench clean clean-jit

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,dask]"
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/dicelab simulate --strategy threshold-300

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q
	$(BIN)/python -m pytest -q --nbmake notebooks

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

# numba's on-disk cache does not notice when a jitted function it inlined from another
# module changed: after editing kernels, drop the compiled copies
clean-jit:
	find src -path '*/__pycache__/*' \( -name '*.nbi' -o -name '*.nbc' \) -delete

clean: clean-jit
	rm -rf $(VENV) build dist src/*.egg-info
