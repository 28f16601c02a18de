# iclr24: every target is derived from the folders under packages/ and shared/.
# `make reproduce-<slug>` runs a paper's default reproduction; `make test` runs every CI leg.

SHELL := /bin/bash
PACKAGES := $(sort $(notdir $(wildcard packages/*)))
SHARED := common llm
LEGS := $(addprefix shared-,$(SHARED)) $(PACKAGES)
# uv may have just been installed by `setup` into Python's scripts dir: fall back to `python3 -m uv`.
UV = $(shell command -v uv 2>/dev/null || echo python3 -m uv)
PYTEST_ARGS ?=
# a CI leg's Python (a version uv can find, or an interpreter path)
PYTHON ?= 3.11
# where the throw-away environments of the isolated legs go
LEG_ROOT ?= $(or $(TMPDIR),/tmp)/iclr24-legs

.PHONY: help setup test test-workspace test-shared lint format build wheel-check reproduce-all tables keep-results report report-check \
        bench-smoke gpu-check \
        list legs new-package $(addprefix test-,$(LEGS)) $(addprefix test-isolated-,$(LEGS)) \
        $(addprefix reproduce-,$(PACKAGES))

help:
	@echo "make setup                  install uv (if missing), system libraries, and the locked workspace"
	@echo "make test                   every CI leg, each in a fresh environment (what CI runs)"
	@echo "make test-workspace         every test in the one workspace environment (faster loop)"
	@echo "make test-<slug>            one package's tests and its contract tests, workspace environment"
	@echo "make test-isolated-<leg>    one CI leg exactly: fresh env, that member + its test group, its tests"
	@echo "                            legs: $(LEGS)"
	@echo "make reproduce-<slug>       one paper's default reproduction (results in runs/<slug>/default)"
	@echo "make reproduce-all          every paper's default reproduction"
	@echo "make keep-results SLUG=x    runs/x/default becomes packages/x/results/ (what its README reports);"
	@echo "                            RUN=dir NAME=paper-cpu keeps a run on the paper's data beside it"
	@echo "make tables                 every README's results table, generated from packages/*/results/"
	@echo "make report | report-check  the results site in report/ (check: rendered in headless Chromium)"
	@echo "make bench-smoke            every package's smoke timed alone (median of 3): docs/bench-smoke.md"
	@echo "make gpu-check              on a CUDA machine: every smoke and paper-path miniature on the GPU"
	@echo "make new-package SLUG=x     a new package from the template (tests and smoke pass at once)"
	@echo "make lint | format | build  ruff (locked) | ruff fix | a wheel per member (dist/)"
	@echo "make wheel-check            every wheel installed in its own fresh venv; runs its --help"

setup:
	@command -v uv >/dev/null 2>&1 || python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet uv
	@if ! ldconfig -p 2>/dev/null | grep -q 'libusb-1.0.so'; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing libusb-1.0-0 (needed by open3d)"; \
	    (apt-get install -y -qq libusb-1.0-0 >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq libusb-1.0-0 >/dev/null)); \
	  else echo "note: open3d needs libusb-1.0; run: sudo apt-get install -y libusb-1.0-0"; fi; \
	fi
	@if ! command -v chromium >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing chromium (headless, for the report's browser test)"; \
	  (apt-get install -y -qq chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null 2>&1)) \
	    || echo "note: chromium could not be installed; the report's browser test will be skipped"; \
	elif ! command -v chromium >/dev/null 2>&1; then echo "note: no chromium (sudo apt-get install -y chromium): the report's browser test is skipped"; fi
	$(UV) sync --all-packages --all-extras --locked

list:
	@echo $(PACKAGES)

legs:
	@echo $(LEGS)

# ---------------------------------------------------------------- tests
# `make test` = every CI leg in isolation, in lanes of one core each (tools/run_legs.py:
# one lane per core, LANES=1 for one leg at a time); each leg's log in $(LEG_ROOT)/logs.
test: setup
	@LEG_ROOT=$(LEG_ROOT) MAKE=$(MAKE) python3 tools/run_legs.py $(if $(RECORD),--record) $(LEGS)

test-workspace: setup
	$(UV) run --no-sync pytest shared/common/tests shared/llm/tests shared/tests \
	  $(addsuffix /tests,$(addprefix packages/,$(PACKAGES))) $(PYTEST_ARGS)

test-shared-common: setup
	$(UV) run --no-sync pytest shared/common/tests $(PYTEST_ARGS)

test-shared-llm: setup
	$(UV) run --no-sync pytest shared/llm/tests $(PYTEST_ARGS)

$(addprefix test-,$(PACKAGES)): test-%: setup
	ICLR24_PACKAGES=$* $(UV) run --no-sync pytest packages/$*/tests shared/tests $(PYTEST_ARGS)

# One CI leg: a throw-away environment with only that member, its extras and its `test`
# dependency group (uv alone: no global pytest is used), then its tests. Bytecode is written
# (PYTHONDONTWRITEBYTECODE cleared) so that the leg's later processes import torch from .pyc.
leg_pkg = $(if $(filter shared-%,$(1)),iclr24-$(patsubst shared-%,%,$(1)),iclr24-$(1))
leg_tests = $(if $(filter shared-%,$(1)),shared/$(patsubst shared-%,%,$(1))/tests,packages/$(1)/tests shared/tests)

$(addprefix test-isolated-,$(LEGS)): test-isolated-%:
	@set -e; env=$(LEG_ROOT)/$*-py$(notdir $(PYTHON)); rm -rf $$env; mkdir -p $(LEG_ROOT); \
	t0=$$(date +%s); \
	UV_PROJECT_ENVIRONMENT=$$env $(UV) sync --quiet --locked --python $(PYTHON) \
	  --package $(call leg_pkg,$*) --all-extras --group test; \
	echo "leg $*: environment ready in $$(( $$(date +%s) - t0 )) s ($$env)"; \
	ICLR24_PACKAGES=$(if $(filter shared-%,$*),none,$*) UV_PROJECT_ENVIRONMENT=$$env PYTHONDONTWRITEBYTECODE= \
	  $(UV) run --no-sync --package $(call leg_pkg,$*) pytest $(call leg_tests,$*) $(PYTEST_ARGS); \
	echo "leg $*: passed in $$(( $$(date +%s) - t0 )) s"; rm -rf $$env

# ---------------------------------------------------------------- reproductions
$(addprefix reproduce-,$(PACKAGES)): reproduce-%: setup
	$(UV) run --no-sync iclr24-$* reproduce --preset default $(ARGS)

reproduce-all: setup
	@set -e; for p in $(PACKAGES); do $(UV) run --no-sync iclr24-$$p reproduce --preset default; done

# ---------------------------------------------------------------- results on file
# `make keep-results SLUG=x`: the finished runs/x/default becomes packages/x/results/ (the file the
# README reports); `make tables` regenerates every README table from those files.
keep-results: setup
	@test -n "$(SLUG)" || { echo "usage: make keep-results SLUG=<slug> [RUN=runs/<slug>/default] [NAME=paper-cpu]"; exit 2; }
	$(UV) run --no-sync python -m iclr24_common.tables --keep $(SLUG) $(if $(RUN),--run $(RUN)) $(if $(NAME),--name $(NAME))

tables: setup
	$(UV) run --no-sync python -m iclr24_common.tables

# `make report`: report/index.html and a page per paper (static, opens from disk);
# `make report-check` also renders it in headless Chromium (screenshot, 19 rows, not blank).
report: setup
	$(UV) run --no-sync iclr24-report --out report

report-check: setup
	$(UV) run --no-sync iclr24-report --out report --browser-check

# ---------------------------------------------------------------- benchmarks
# The smoke's 60 s budget is a speed target measured here, alone, never asserted by a test.
bench-smoke: setup
	$(UV) run --no-sync python tools/bench_smoke.py $(ARGS)

# On a machine with an NVIDIA GPU: every smoke on CUDA against its CPU run, every paper-path
# miniature on CUDA, and the torchrun (NCCL) tests where there are 2 GPUs: docs/gpu-check.md.
gpu-check: setup
	$(UV) run --no-sync python tools/gpu_check.py $(ARGS)

# ---------------------------------------------------------------- scaffold, lint, wheels
new-package:
	@test -n "$(SLUG)" || { echo "usage: make new-package SLUG=<slug>"; exit 2; }
	python3 tools/new_package.py $(SLUG)
	$(UV) lock --quiet
	@echo "next: make test-$(SLUG)   (then write the method; see CONTRIBUTING.md)"

lint: setup
	$(UV) run --no-sync ruff check .
	$(UV) run --no-sync ruff format --check .

format: setup
	$(UV) run --no-sync ruff check --fix .
	$(UV) run --no-sync ruff format .

build: setup
	@set -e; rm -rf dist; for m in common llm; do $(UV) build --quiet --package iclr24-$$m --no-sources --out-dir dist; done; \
	for p in $(PACKAGES); do $(UV) build --quiet --package iclr24-$$p --no-sources --out-dir dist; done; ls dist

# Each package's wheel in its own fresh venv with its sibling wheels (pip resolves the rest
# from PyPI), then its console script's --help: what `pip install` of one method gives a user.
wheel-check: build
	@set -e; for p in $(PACKAGES); do \
	  env=$(LEG_ROOT)/wheel-$$p; rm -rf $$env; $(UV) venv --quiet --python $(PYTHON) $$env; \
	  w=$$(ls dist/iclr24_$$(echo $$p | tr - _)-*.whl); \
	  $(UV) pip install --quiet --python $$env/bin/python --find-links dist $$w; \
	  $$env/bin/iclr24-$$p --help >/dev/null && echo "wheel $$p: installs, --help runs"; rm -rf $$env; \
	done
