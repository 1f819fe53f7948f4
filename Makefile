# Two entry points for a fresh clone: `make demo` and `make test`.
# Each creates the virtualenv in .venv when missing (torch first, as the CPU build).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TORCH ?= torch==2.13.0
# PyPI's Linux torch is the CUDA build (GBs of nvidia-* packages). This index holds the CPU
# build, whose version (2.13.0+cpu) sorts above PyPI's, so pip takes it wherever the index
# answers. Set it empty to take whatever build the other indexes give (e.g. CUDA on purpose).
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

# Which torch build the venv holds; with TORCH_INDEX set, a CUDA build is an error that says
# how to replace it (pip keeps an installed torch==2.13.0, so rerunning make does not).
define CHECK_TORCH
import os, sys
from importlib.metadata import distributions
import torch
nvidia = sorted({d.metadata["Name"] for d in distributions()
                 if (d.metadata["Name"] or "").lower().startswith("nvidia-")})
if not torch.version.cuda and not nvidia:
    print(f"torch {torch.__version__}: the CPU build")
    sys.exit(0)
venv = os.environ["VENV"]
build = f"a CUDA build (CUDA {torch.version.cuda})" if torch.version.cuda else "the CPU build"
found = f"torch {torch.__version__} is {build}, with {len(nvidia)} nvidia-* packages, in {venv}"
if not os.environ["TORCH_INDEX"]:
    print(f"{found} (TORCH_INDEX is empty: kept)")
    sys.exit(0)
sys.exit(f"error: {found}: hopgraph needs only the CPU build, from TORCH_INDEX="
         f"{os.environ['TORCH_INDEX']}, which pip could not reach or did not prefer.\n"
         f"Fix: rm -rf {venv} and run make again where that index answers (or with "
         f"TORCH_INDEX set to a mirror of it); to keep the CUDA build: make TORCH_INDEX= ...")
endef
export CHECK_TORCH

# torch alone from the CPU index (--no-deps: one look-up there, not one per dependency,
# which matters when the index is unreachable and each look-up waits out pip's retries),
# then its dependencies from the usual indexes.
define INSTALL_TORCH
test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
$(BIN)/python -m pip install -q --upgrade pip
@echo "installing $(TORCH)$(if $(TORCH_INDEX), (the CPU build, from $(TORCH_INDEX)))"
$(BIN)/python -m pip install -q --no-deps $(TORCH) $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX))
$(BIN)/python -m pip install -q $(TORCH)
endef

.PHONY: demo test test-fast lint typecheck install torch clean

$(STAMP): pyproject.toml
	$(INSTALL_TORCH)
	$(BIN)/python -m pip install -q -e ".[dev]"
	@VENV="$(VENV)" TORCH_INDEX="$(TORCH_INDEX)" $(BIN)/python -W ignore -c "$$CHECK_TORCH"
	touch $(STAMP)

install: $(STAMP)

# Only torch (CPU build) into $(VENV): `.ci/package` uses it for the venv it installs the
# wheel into (make torch VENV=/tmp/somewhere).
torch:
	$(INSTALL_TORCH)
	@VENV="$(VENV)" TORCH_INDEX="$(TORCH_INDEX)" $(BIN)/python -W ignore -c "$$CHECK_TORCH"

demo: $(STAMP)
	$(BIN)/hopgraph demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# mypy as [tool.mypy] in pyproject.toml says: all of src/hopgraph, strict for the modules it
# lists (docs/development.md#type-checking).
typecheck: $(STAMP)
	$(BIN)/mypy

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	PYTEST=$(BIN)/pytest bash tests/run.sh

# The inner loop: the tests that start no Milvus server, no other process and no browser,
# and build no graph that takes seconds (`-m "not slow"`; tests/conftest.py marks them).
# Compiled modules are kept between runs even where PYTHONDONTWRITEBYTECODE is set: most of
# a run's start is importing (and pytest's assertion rewriting of) the test modules.
test-fast: $(STAMP)
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -q -m "not slow and not server" --durations=5

clean:
	rm -rf $(VENV)
