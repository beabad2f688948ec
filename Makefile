# make run: bootstrap .venv if needed, then run the default check.
# make test: bootstrap .venv if needed, then run the test suite.
# make lint: mypy on kmc/.  make browser: Debian's chromium for the browser tests.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-slow lint browser gate java clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
	  || { echo "kmc needs Python >= 3.11 (found $$($(PYTHON) --version))"; exit 2; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,spark,plot,compiled]'
	@touch $(STAMP)

# PySpark needs Java 17 or newer; only the Spark engine uses it.
java:
	@java -version 2>&1 | grep -qE 'version "(1[7-9]|[2-9][0-9])' \
	  || { echo "Java 17+ not found: the Spark engine needs it. On Debian/Ubuntu: apt-get install -y openjdk-17-jre-headless"; exit 2; }

# hw, kip101, kip279 and kip320-first-try lose data, as TLC finds: the comparison exits 12
# (kmc/exits.py: VIOLATION), and any other code, 0 included, is a failure of make run
run: $(STAMP)
	$(BIN)/kmc compare replication --modes hw,kip101,kip279,kip320-first-try,kip320 --replicas 2 --max-leader-epoch 2; \
	  test $$? -eq 12

# on TEST_WORKERS processes (pytest-xdist); the tests that share a JVM or a browser keep to one
TEST_WORKERS ?= 2
test: $(STAMP) java
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup

# static types of the library (settings in [tool.mypy] of pyproject.toml)
lint: $(STAMP)
	$(BIN)/python -m mypy kmc

# headless Chromium for the browser tests, tests/test_trace_formats.py and tests/test_explore_browser.py (they skip without one,
# and fail under CI=true); tests themselves never install software
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
	  || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } \
	  || { echo "chromium could not be installed: on Debian/Ubuntu, as root: apt-get install -y chromium"; exit 2; }

# kmc's own gate: every model and mode against baselines/kmc.toml (docs/ci.md)
gate: $(STAMP)
	$(BIN)/kmc gate baselines/kmc.toml --quiet --junit build/gate-junit.xml

test-slow: $(STAMP) java
	$(BIN)/python -m pytest -q -m slow --durations 15

clean:
	rm -rf $(VENV) .pytest_cache build
