# Entry points; a fresh machine needs only python3 (3.11+) and make:
#   make run        set up .venv and run `dicelab simulate --strategy threshold-300`
#   make test       set up .venv and run the whole test suite, what CI runs (.ci/run): ruff,
#                   every pytest test, the docstring examples of src/dicelab, the notebooks
#   make test-fast  the edit-test loop: ruff, the pytest tests not marked slow, the
#                   docstring examples (compiled kernels kept in .venv/jit-cache; editing
#                   a module that defines no kernel keeps them)
# Test runs write nothing into the user's cache directory (~/.cache/dicelab): the pytest
# tests get a fresh table cache each (tests/conftest.py), the doctests and notebooks a
# temporary one (WITH_TEMP_CACHE), and compiled kernels (and bytecode) stay in .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# numba's compiled kernels for test runs, one directory per hash of the kernel sources (see
# dicelab/__init__.py)
TEST_JIT_CACHE := $(abspath $(VENV))/jit-cache
# pytest worker processes (pytest-xdist): one per core; whole test files go to one worker,
# so a module's shared tables are built once, in the order tests/conftest.py gives them
# (the longest first: LONGEST_FIRST), not xdist's own (--no-loadscope-reorder)
TEST_WORKERS ?= auto
# --durations: the slowest tests are printed by every run, so that creep shows in CI logs.
# nbmake's plugin (it imports Jupyter) is loaded only by the run that executes notebooks.
PYTEST := $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile \
	--no-loadscope-reorder --durations=15
NO_NB := -p no:nbmake

# Prefix for a recipe line: runs the rest of the line with DICELAB_CACHE_DIR set to a new
# temporary directory, deleted when the line ends (also on failure or Ctrl-C).
WITH_TEMP_CACHE = tmp=$$(mktemp -d "$${TMPDIR:-/tmp}/dicelab-test-cache.XXXXXX") && \
	trap 'rm -rf "$$tmp"' EXIT && trap 'exit 130' INT && trap 'exit 143' TERM && \
	DICELAB_CACHE_DIR="$$tmp"

.PHONY: setup run test test-fast lint bench notebooks clean clean-jit

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,dask,rl]"
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/dicelab simulate --strategy threshold-300

test test-fast: export DICELAB_JIT_CACHE_DIR = $(TEST_JIT_CACHE)
# Python's bytecode of test runs (with pytest's assertion rewriting, most of a worker's
# start-up) is kept in .venv/pycache, also where the environment says not to write any
test test-fast: export PYTHONDONTWRITEBYTECODE =
test test-fast: export PYTHONPYCACHEPREFIX = $(abspath $(VENV))/pycache

# One pytest run each: the tests, the docstring examples and the notebooks share the
# workers (one start-up, and no worker idles while the other finishes a run). The pytest
# tests set their own table cache (tests/conftest.py); the rest use the temporary one.
test: $(STAMP)
	$(BIN)/ruff check .
	$(WITH_TEMP_CACHE) $(PYTEST) tests --doctest-modules src/dicelab --nbmake notebooks

test-fast: $(STAMP)
	$(BIN)/ruff check .
	$(WITH_TEMP_CACHE) $(PYTEST) $(NO_NB) -m "not slow" tests --doctest-modules src/dicelab

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

# The notebooks are committed without outputs; this renders them, executed with today's
# code and results/, into build/notebooks/ (make test executes them too, without saving).
notebooks: $(STAMP)
	cd notebooks && ../$(BIN)/jupyter nbconvert --to notebook --execute \
	  --output-dir ../build/notebooks *.ipynb

# Deletes numba's compiled kernels: those of test runs, those of dicelab's user cache
# (numba/ in it, or $DICELAB_JIT_CACHE_DIR) and in-tree copies (__pycache__, numba's default
# when NUMBA_CACHE_DIR is unusable). Never needed for correctness: dicelab keys its kernel
# cache by a hash of the kernel sources, so a changed kernel source compiles afresh.
clean-jit:
	find src -path '*/__pycache__/*' \( -name '*.nbi' -o -name '*.nbc' \) -delete
	rm -rf $(TEST_JIT_CACHE)
	if [ -x $(BIN)/python ]; then $(BIN)/python -c \
	  'import dicelab; dicelab._prune_jit_dirs(dicelab._jit_cache_root(), keep=0)'; fi

clean: clean-jit
	rm -rf $(VENV) build dist src/*.egg-info
