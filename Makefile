# Set-up and the two main jobs; each target installs what it needs, nothing more.
#   make train   train the default config end to end, then print an evaluation table
#                (.venv: the package with its train extra: torch, Stable-Baselines3, sb3-contrib, TensorBoard)
#   make test    run the test suite (with the web app's tests in headless Chromium, installed if missing)
#   make bench-pgx   lama-dice bench --only pgx: the vector game vs Pgx (installs jax and pgx into .venv)
#   make docs    the documentation site (Sphinx + MyST: docs/*.md and an API reference) into docs/_build/html,
#                warnings as errors (the docs extra, into .venv)
#   make lint    the checks: ruff and mypy (configured in pyproject.toml): the main suite in .venv (base + the test,
#                bench, web and openspiel extras: OpenSpiel's pins sit beside the main ones), then the RLlib tests
#                in .venv-rllib (the rllib extra, which pins its own gymnasium, so it never changes the versions
#                the main suite tests), then
#                tests/interop/ (TorchRL, Tianshou, SB3, RecordVideo, PettingZoo, docs/using-with.md) in
#                .venv-interop (the interop extra: moviepy pins an older pillow, so it gets its own venv too)
# Nothing here needs an activated environment or the project's commands on PATH.
PYTHON     ?= python3
VENV       ?= .venv
RLLIB_VENV ?= .venv-rllib
INTEROP_VENV ?= .venv-interop
PY         := $(VENV)/bin/python
RLLIB_PY   := $(RLLIB_VENV)/bin/python
INTEROP_PY := $(INTEROP_VENV)/bin/python
# The CPU build of PyTorch (installs from local disk on the project's machines).
# Elsewhere, override: make test TORCH="torch>=2.3"
TORCH      ?= torch==2.13.0
CONFIG     ?= configs/default.yaml
PIP        := -m pip install -q

.PHONY: install lint test test-main test-rllib test-interop train bench-pgx docs clean chromium

install: $(VENV)/.base

# A venv with PyTorch first (so that pip never resolves a multi-GB CUDA build), then the project with its
# train extra (the core alone, `pip install .`, has no torch: tests/test_packaging.py checks that one).
$(VENV)/.base: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) $(PIP) --upgrade pip
	$(PY) $(PIP) "$(TORCH)"
	$(PY) $(PIP) -e ".[train]"
	touch $@

$(VENV)/.test: $(VENV)/.base
	$(PY) $(PIP) -e ".[train,test,bench,web,openspiel]"
	touch $@

# The browser tests (tests/test_web_browser.py) drive Debian's headless Chromium with its chromedriver;
# installed here when missing and apt-get can (root, as in CI); else those tests say how to get it.
chromium:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	    else echo "make chromium: chromium and chromedriver are missing (apt-get install chromium chromium-driver as root)"; fi; }

$(RLLIB_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(RLLIB_VENV)
	$(RLLIB_PY) $(PIP) --upgrade pip
	$(RLLIB_PY) $(PIP) "$(TORCH)"
	$(RLLIB_PY) $(PIP) -e ".[train,test,rllib]"
	touch $@

$(INTEROP_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(INTEROP_VENV)
	$(INTEROP_PY) $(PIP) --upgrade pip
	$(INTEROP_PY) $(PIP) "$(TORCH)"
	$(INTEROP_PY) $(PIP) -e ".[train,test,bench,interop,openspiel]" "$(TORCH)"
	touch $@

$(VENV)/.lint: $(VENV)/.test
	$(PY) $(PIP) -e ".[train,test,bench,web,openspiel,lint]"
	touch $@

# ruff (pycodestyle, pyflakes, bugbear, isort, pyupgrade, pep8-naming, pydocstyle) and mypy,
# configured in pyproject.toml, over every package and the tests; mypy runs on the packages laid
# out as installed (tools/typecheck.py: agents/ is lama_dice.agents...), with the repository's paths
lint: $(VENV)/.lint
	$(PY) -m ruff check lama_env lama_dice agents train evaluation cli bench tests tools
	$(PY) -m tools.typecheck

test: test-main test-rllib test-interop

test-main: $(VENV)/.test chromium
	$(PY) -m pytest --ignore=tests/test_rllib.py --ignore=tests/interop

test-rllib: $(RLLIB_VENV)/.installed
	$(RLLIB_PY) -m pytest tests/test_rllib.py
	$(RLLIB_PY) -m pytest tests/interop/test_interop_docs.py -k rllib

test-interop: $(INTEROP_VENV)/.installed
	$(INTEROP_PY) -m pytest tests/interop

train: $(VENV)/.base
	$(PY) -m lama_dice train $(CONFIG)

# The bench-pgx extra (jax, pgx; numpy>=2 as the main suite's) goes into .venv: not needed by make test
# (tests/test_bench_pgx.py skips its smoke run without it).
$(VENV)/.bench-pgx: $(VENV)/.base
	$(PY) $(PIP) -e ".[bench-pgx]"
	touch $@

bench-pgx: $(VENV)/.bench-pgx
	$(PY) -m lama_dice bench --only pgx

# The site: docs/conf.py (Sphinx, MyST-Parser, autodoc); every warning is an error (-W), all reported (--keep-going);
# nothing is fetched (no intersphinx, no CDN): it builds offline. A broken local link or picture of the built site,
# or a docstring's Markdown left raw, fails it too (tools/site_check.py). Open docs/_build/html/index.html.
$(VENV)/.docs: $(VENV)/.test
	$(PY) $(PIP) -e ".[docs]"
	touch $@

docs: $(VENV)/.docs
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html
	@echo "docs: docs/_build/html/index.html"

clean:
	rm -rf $(VENV) $(RLLIB_VENV) $(INTEROP_VENV) docs/_build
