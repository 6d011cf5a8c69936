# sitecache developer commands. `make test` is what CI runs (through .ci/run).
#
# Two tiers of tests, each test in exactly one (tests/tiers.py marks them):
#   make check  lint, types, import contracts and the tests that start no server of their own
#               (the quick tier; it uses the Redis and PostgreSQL of REDIS_URL and DATABASE_URL
#               when they answer, and skips those cases otherwise)
#   make e2e    the tests marked e2e or faults: real gunicorn, nginx, redis-server, PostgreSQL
#               clusters and Chromium started by the tests themselves
#   make test   both: `check`, then `e2e`
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Two stamps: `make run` needs only what serving needs (the package and its runtime
# dependencies, a first run in well under a minute); every other target needs the test extra too.
RUN_STAMP := $(VENV)/.installed-run
STAMP  := $(VENV)/.installed
# `make run` listens on $(BIND): HOST=0.0.0.0 PORT=8080 make run, or BIND=... make run.
HOST   ?= 127.0.0.1
PORT   ?= 8000
BIND   ?= $(HOST):$(PORT)

.PHONY: run test check e2e lint format typecheck imports unit docs bench cache-tests clean

# The virtual environment is (re)built when missing or when the package metadata changes.
$(RUN_STAMP): pyproject.toml setup.cfg
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e .
	@touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@# uWSGI compiles from source (about 40 s, a C compiler): tried, never required; its e2e cases
	@# skip with a message where it did not build.
	-@$(BIN)/python -m pip install --quiet 'uwsgi>=2.0.25' >/dev/null 2>&1 || echo "make: uWSGI did not build here; its end-to-end cases will be skipped"
	@touch $(STAMP)

run: $(RUN_STAMP)
	$(BIN)/sitecache serve --demo --bind '$(BIND)'

test: check e2e

check: lint typecheck imports unit

lint: $(STAMP)
	$(BIN)/ruff check sitecache tests bench examples docs
	$(BIN)/ruff format --check sitecache tests bench examples docs

format: $(STAMP)
	$(BIN)/ruff check --fix sitecache tests bench examples docs
	$(BIN)/ruff format sitecache tests bench examples docs

typecheck: $(STAMP)
	$(BIN)/mypy

imports: $(STAMP)
	$(BIN)/lint-imports

# The tests on several processes (pytest-xdist, --dist loadscope as tests/conftest.py schedules
# it): each module runs whole on one worker, the race-harness modules together, the fault suite
# together, the longest first. Bytecode is written whatever PYTHONDONTWRITEBYTECODE says (ignored
# by git): every server and command the end-to-end tests start imports the package again, and
# compiling it each time doubles what an import costs.
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest --dist loadscope
# The quick tier: tests that start no server (a test that starts one unmarked fails, naming it).
CHECK_WORKERS ?= 2
# Its temporary files (thousands of test sites, their SQLite databases written and checkpointed:
# about 800 MB) in memory when /dev/shm is a tmpfs with 2 GB free, so that no sync waits on a disk
# shared with other work; only the failed tests' directories are kept after the run there.
# CHECK_TMPDIR= keeps the system's temporary directory (and pytest's usual last three runs).
CHECK_TMPDIR ?= $(shell df -Pk -t tmpfs /dev/shm 2>/dev/null | awk 'NR == 2 && $$4 >= 2097152 { print "/dev/shm" }')
unit: $(STAMP)
	$(if $(CHECK_TMPDIR),TMPDIR=$(CHECK_TMPDIR)) $(PYTEST) -n $(CHECK_WORKERS) \
	  $(if $(CHECK_TMPDIR),-o tmp_path_retention_policy=failed) -m "not e2e and not faults"

# The end-to-end tier on TEST_WORKERS processes: three on two cores, as these tests spend much
# of their time waiting on servers.
TEST_WORKERS ?= 3
e2e: $(STAMP)
	$(PYTEST) -n $(TEST_WORKERS) -m "e2e or faults"

# The documentation site (docs/, Sphinx), warnings as errors, into docs/_build/html.
docs: $(STAMP)
	$(BIN)/sphinx-build -W --keep-going -b html -q docs docs/_build/html

# Every benchmark, then bench/RESULTS.md (bench/run_all.py); BENCH_FLAGS=--quick: a smoke run.
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python bench/run_all.py $(BENCH_FLAGS)

# The public cache-tests suite (HTTP caching, RFC 9111) against PageCache on memory, disk and
# Redis ($$REDIS_URL), its scores written beside the published ones of other caches into
# bench/RESULTS.md and docs/reference/cache-tests-results.md. CACHE_TESTS_DIR names a checkout
# of the suite prepared as its README says; without one this says so and does nothing.
cache-tests: $(STAMP)
	$(BIN)/python bench/cache_tests.py --write $(CACHE_TESTS_FLAGS)

clean:
	rm -rf $(VENV) build dist docs/_build *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis .import_linter_cache
