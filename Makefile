# Set-up and the two everyday jobs. Everything installs into .venv; torch is
# pinned to the CPU wheel here first so nothing pulls a multi-GB CUDA build.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO := build/demo
OFFLINE := HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1

.PHONY: install test demo completions clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[test]'
	touch $@

test: install
	$(OFFLINE) $(BIN)/python -m pytest -q

# The main job on a classifier trained here in seconds (no download):
# build-refs -> explain -> evaluate -> render.
demo: install
	$(OFFLINE) $(BIN)/python examples/toy_model.py $(DEMO)
	$(OFFLINE) $(BIN)/contrastcat build-refs --model $(DEMO)/model --data $(DEMO)/train.jsonl -o $(DEMO)/refs.h5
	$(OFFLINE) $(BIN)/contrastcat explain $(DEMO)/inputs.jsonl --refs $(DEMO)/refs.h5 -o $(DEMO)/attr.jsonl
	$(OFFLINE) $(BIN)/contrastcat evaluate $(DEMO)/attr.jsonl --kendall --refs $(DEMO)/refs.h5 -o $(DEMO)/report.json
	$(OFFLINE) $(BIN)/contrastcat render $(DEMO)/attr.jsonl --words --limit 5

completions: install
	$(BIN)/python -m contrastcat_cli.completions completions

clean:
	rm -rf $(VENV) build
