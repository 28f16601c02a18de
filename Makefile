# iclr24: every target is derived from the folders under packages/.
# `make reproduce-<slug>` runs a paper's default reproduction; `make test` runs all tests.

SHELL := /bin/bash
PACKAGES := $(sort $(notdir $(wildcard packages/*)))
# uv may have just been installed by `setup` into Python's scripts dir: fall back to `python3 -m uv`.
UV = $(shell command -v uv 2>/dev/null || echo python3 -m uv)
PYTEST_ARGS ?=

.PHONY: help setup test test-shared lint format build reproduce-all list $(addprefix test-,$(PACKAGES)) $(addprefix reproduce-,$(PACKAGES))

help:
	@echo "make setup              install uv (if missing), system libraries, and the locked workspace"
	@echo "make test               all tests ($(words $(PACKAGES)) packages + shared)"
	@echo "make test-<slug>        one package's tests:    $(PACKAGES)"
	@echo "make reproduce-<slug>   one paper's default reproduction (results in runs/<slug>/default)"
	@echo "make reproduce-all      every paper's default reproduction"
	@echo "make lint | build       ruff check + format check | a wheel per package (uv build --no-sources)"

setup:
	@command -v uv >/dev/null 2>&1 || python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet uv
	@if ! ldconfig -p 2>/dev/null | grep -q 'libusb-1.0.so'; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing libusb-1.0-0 (needed by open3d)"; \
	    (apt-get install -y -qq libusb-1.0-0 >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq libusb-1.0-0 >/dev/null)); \
	  else echo "note: open3d needs libusb-1.0; run: sudo apt-get install -y libusb-1.0-0"; fi; \
	fi
	$(UV) sync --all-packages --all-extras --locked

list:
	@echo $(PACKAGES)

test: setup
	$(UV) run --no-sync pytest shared/tests $(wildcard $(addsuffix /tests,$(addprefix packages/,$(PACKAGES)))) $(PYTEST_ARGS)

test-shared: setup
	$(UV) run --no-sync pytest shared/tests $(PYTEST_ARGS)

$(addprefix test-,$(PACKAGES)): test-%: setup
	$(UV) run --no-sync pytest packages/$*/tests $(PYTEST_ARGS)

$(addprefix reproduce-,$(PACKAGES)): reproduce-%: setup
	$(UV) run --no-sync iclr24-$* reproduce --preset default $(ARGS)

reproduce-all: setup
	@set -e; for p in $(PACKAGES); do $(UV) run --no-sync iclr24-$$p reproduce --preset default; done

lint: setup
	$(UV) run --no-sync ruff check .
	$(UV) run --no-sync ruff format --check .

format: setup
	$(UV) run --no-sync ruff check --fix .
	$(UV) run --no-sync ruff format .

build: setup
	@set -e; rm -rf dist; $(UV) build --package iclr24-common --no-sources --out-dir dist; \
	for p in $(PACKAGES); do $(UV) build --package iclr24-$$p --no-sources --out-dir dist; done; ls dist
