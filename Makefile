# Set-up and the two main jobs; every target installs what it needs into .venv.
#   make train   train the default config end to end, then print an evaluation table
#   make test    run the test suite
VENV   ?= .venv
PY     := $(VENV)/bin/python
# The CPU build of PyTorch (installs from local disk on the project's machines).
# Elsewhere, override: make test TORCH="torch>=2.3"
TORCH  ?= torch==2.13.0
CONFIG ?= configs/default.yaml

.PHONY: install test train clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "$(TORCH)"
	$(PY) -m pip install -q -e ".[test,rllib,bench]"
	touch $@

test: install
	$(PY) -m pytest

train: install
	$(VENV)/bin/lama-dice train $(CONFIG)

clean:
	rm -rf $(VENV)
