# Two commands for a fresh machine: `make serve` and `make test`. `make setup` is idempotent.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.setup-done

.PHONY: setup serve test docs bench clean

setup: $(STAMP)

# torch (the test extra's, under sentence-transformers, the test oracle; the daemon never loads it)
# is installed first and pinned: torch==2.13.0 is the CPU wheel on this machine's disk; any other
# spec would pull gigabytes of CUDA through sentence-transformers. The editable install
# is a plain path (compat mode): setuptools' default import finder costs every ai-memory process,
# hooks included, ~20 ms at start-up.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check torch==2.13.0
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]' --config-settings editable_mode=compat
	touch $(STAMP)

# The line a newcomer needs next: the CLI is in .venv/bin, which no shell has on its PATH.
serve: setup
	@echo 'ai-memory: the CLI is $(CURDIR)/$(VENV)/bin/ai-memory; in another terminal:'
	@echo '  export PATH="$(CURDIR)/$(VENV)/bin:$$PATH"; ai-memory status'
	HF_HUB_OFFLINE=1 $(VENV)/bin/ai-memory serve

# Bytecode first, as a wheel install has it: hooks and the MCP server start in tens of ms only
# with it, and an environment with PYTHONDONTWRITEBYTECODE never writes it. Two workers, each
# test module whole on one of them (its module fixtures are made once). The type checker
# first ([tool.mypy] in pyproject.toml): a new error fails the run before the suite starts.
test: setup
	$(PY) -m compileall -q ai_memory
	$(PY) -m mypy
	HF_HUB_OFFLINE=1 $(PY) -m pytest -n 2 --dist loadfile

# The docs site (Sphinx, MyST Markdown, docs/conf.py) into site/, any warning an error: -W fails
# the build on it, --keep-going lists them all first, -n also reports every reference that resolves
# to nothing (tests/test_docs.py runs the same build). The build's cache is in build/doctrees.
# `make docs PY=...` uses another interpreter as it is and skips setup, which would install into
# that interpreter's venv.
docs: $(if $(filter command line,$(origin PY)),,setup)
	$(PY) -m sphinx -W --keep-going -n -b html -d build/doctrees docs site

bench: setup
	$(PY) benchmarks/writer.py

clean:
	rm -rf $(VENV) build *.egg-info site
