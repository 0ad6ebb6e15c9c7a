# The single entry for set-up, demo, tests and benchmarks.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# PyTorch's wheel index. Empty: pip's own (PyPI's Linux torch is the multi-GB CUDA build);
# for the CPU build: make setup TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
TORCH_INDEX_URL ?=

.PHONY: setup demo test docs lint typecheck bench bench-scale clean

$(BIN)/workbench: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip
	# torch first, from TORCH_INDEX_URL when set, so that the extras do not pull another build.
	$(BIN)/pip install torch==2.13.0 $(if $(TORCH_INDEX_URL),--index-url $(TORCH_INDEX_URL))
	$(BIN)/pip install -e '.[models,test,postgres,onnx,serve]'
	touch $(BIN)/workbench

setup: $(BIN)/workbench

demo: setup
	HF_HUB_OFFLINE=1 $(BIN)/workbench demo

# The docs site (mkdocs.yml, docs/) is built with --strict into the ignored site/: a broken link,
# anchor or nav entry fails the test; the command reference is generated from the parsers.
test: setup
	$(BIN)/lint-imports --no-cache
	$(BIN)/mkdocs build --strict --quiet --site-dir site
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -n 2

# Serve the docs site locally (http://127.0.0.1:8000), rebuilt as pages change.
docs: setup
	$(BIN)/mkdocs serve

lint: setup
	$(BIN)/ruff check workbench tests bench

# mypy over the pure core and formats (files listed in pyproject's [tool.mypy]); not part of test.
typecheck: setup
	$(BIN)/pip install --quiet mypy types-PyYAML
	$(BIN)/mypy

# Benchmarks print figures; they are not tests. Some need ../shared/collections.
bench: setup
	$(BIN)/python bench/eval_speed.py
	HF_HUB_OFFLINE=1 $(BIN)/python bench/judge_latency.py
	HF_HUB_OFFLINE=1 $(BIN)/python bench/retrieval_speed.py
	HF_HUB_OFFLINE=1 $(BIN)/python bench/encode_speed.py
	HF_HUB_OFFLINE=1 $(BIN)/python bench/pool_speed.py
	HF_HUB_OFFLINE=1 $(BIN)/python bench/coverage_sim.py

# Cost against corpus size up to a million synthetic passages (about 10 minutes, 3 GB of disk).
bench-scale: setup
	HF_HUB_OFFLINE=1 $(BIN)/python bench/scale.py --latency --run-check --vectors-sizes 1000000 \
		--rank-bm25-upto 10000 --adaptive

clean:
	rm -rf $(VENV) .workbench site
