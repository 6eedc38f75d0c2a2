# forge_mcore: `make run` installs and runs the demonstration; `make test` installs and runs the CPU suite.
PYTHON ?= python3
PIP := $(PYTHON) -m pip
HAS_GPU := $(shell nvidia-smi -L >/dev/null 2>&1 && echo 1)

.PHONY: install run test lint compile-check

# Without an NVIDIA GPU, take the CPU build of torch first (constraints/cpu.txt says why).
install:
ifeq ($(HAS_GPU),1)
	$(PIP) install -q -e ".[dev,nn]"
else
	$(PIP) install -q -c constraints/cpu.txt torch==2.13.0
	$(PIP) install -q -c constraints/cpu.txt -e ".[dev,nn]"
endif

run: install
	$(PYTHON) -m forge_mcore.demo

test: install
	$(PYTHON) -m pytest -n 2 -q --durations=15

lint:
	ruff check forge_mcore tests scripts

# The fused kernel compiled for sm_90 without a GPU: catches compile errors of the TMA path.
compile-check:
	$(PYTHON) scripts/compile_check.py --quick
