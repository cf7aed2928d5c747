# megaview: convenience wrapper around CMake. The README's two commands:
#   make run    install missing Debian packages, configure, build, open the GUI on $(SCENE)
#   make test   install missing Debian packages, configure, build, run the test suite (no GPU needed)
#   make figures  redraw every plot in $(FIGURES) from its CSV (tools/figures.py, python3-matplotlib)
#
# Variables (make VAR=value ...):
#   BUILD_DIR  build folder                                   (default: build)
#   CUDA_ARCH  CMAKE_CUDA_ARCHITECTURES, e.g. 90 or "86;90"   (default: empty = CMake decides:
#              the GPU's own if nvidia-smi answers, else 90)
#   JOBS       parallel build jobs                            (default: nproc)
#   SCENE      scene the GUI opens                            (default: room)
#   ARGS       more arguments for the GUI, e.g. ARGS="--strategy megakernel"
#   SKIP_DEPS  set to 1 to skip the Debian package check
#   NVCC       path to nvcc                                   (default: found on PATH or in /usr/local/cuda)
#   FIGURES    folder (or CSV) make figures draws             (default: docs)

BUILD_DIR ?= build
CUDA_ARCH ?=
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
SCENE     ?= room
ARGS      ?=
SKIP_DEPS ?=
FIGURES   ?= docs
DIST_DIR  := dist

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := all

# nvcc: $CUDACXX, then PATH, then the CUDA Toolkit's usual places (a fresh machine often lacks it on PATH).
NVCC_GIVEN := $(filter command environment%,$(origin NVCC))
ifeq ($(origin NVCC),undefined)
  NVCC := $(firstword $(wildcard $(CUDACXX)) \
                      $(shell command -v nvcc 2>/dev/null) \
                      $(wildcard /usr/local/cuda/bin/nvcc) \
                      $(lastword $(sort $(wildcard /usr/local/cuda-*/bin/nvcc))))
endif

# Ninja when installed, else Unix Makefiles. An existing build folder keeps the generator it was made with.
ifneq ($(wildcard $(BUILD_DIR)/CMakeCache.txt),)
  GENERATOR_FLAG :=
else ifneq ($(shell command -v ninja 2>/dev/null),)
  GENERATOR_FLAG := -G Ninja
else
  GENERATOR_FLAG := -G "Unix Makefiles"
endif

# The compiler is passed until CMake has cached one (or when NVCC is set explicitly); later runs keep
# the cached one, so a different PATH does not make CMake throw the cache away.
CACHED_NVCC := $(shell sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' $(BUILD_DIR)/CMakeCache.txt 2>/dev/null)
PASS_NVCC   := $(if $(NVCC_GIVEN)$(if $(CACHED_NVCC),,none cached),yes)
CMAKE_FLAGS := $(GENERATOR_FLAG)
ifneq ($(PASS_NVCC),)
  CMAKE_FLAGS += -DCMAKE_CUDA_COMPILER=$(NVCC)
endif
ifneq ($(strip $(CUDA_ARCH)),)
  CMAKE_FLAGS += "-DCMAKE_CUDA_ARCHITECTURES=$(CUDA_ARCH)"
endif

.PHONY: all deps check-cuda configure build run test figures dist clean help info

all: build

help:
	@sed -n '1,/^$$/p' $(firstword $(MAKEFILE_LIST))
	@echo 'Targets: deps configure build run test figures dist clean info'

info:
	@echo "BUILD_DIR=$(BUILD_DIR) CUDA_ARCH=$(if $(strip $(CUDA_ARCH)),$(CUDA_ARCH),(CMake decides)) JOBS=$(JOBS)"
	@echo "NVCC=$(if $(NVCC),$(NVCC),(not found))"
	@echo 'cmake flags: $(CMAKE_FLAGS)'

deps:
ifneq ($(SKIP_DEPS),1)
	@bash tools/install-deps.sh
endif

check-cuda:
	@if [ -n "$(PASS_NVCC)" ] && [ ! -x "$(NVCC)" ]; then \
	  echo "error: the CUDA Toolkit (nvcc, CUDA >= 12) is required to build megaview, and nvcc was" >&2; \
	  echo "  found neither on PATH nor in /usr/local/cuda/bin. Install it from Debian (apt-get install" >&2; \
	  echo "  nvidia-cuda-toolkit, in contrib/non-free) or from NVIDIA's repository" >&2; \
	  echo "  (https://developer.nvidia.com/cuda-downloads), or pass NVCC=/path/to/nvcc." >&2; \
	  exit 1; \
	fi

configure: deps check-cuda
	cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)
	@echo "megaview is built: $(BUILD_DIR)/megaview (the README's examples call it megaview; run them as $(BUILD_DIR)/megaview ... or put $(abspath $(BUILD_DIR)) on PATH)"

run: build
	@if [ -z "$${DISPLAY:-}$${WAYLAND_DISPLAY:-}" ]; then \
	  echo "note: no DISPLAY is set; the GUI needs a desktop session (or try: xvfb-run -a $(BUILD_DIR)/megaview ...)" >&2; \
	fi
	$(BUILD_DIR)/megaview --scene $(SCENE) $(ARGS)

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure

# Every plot of $(FIGURES) as PNG and PDF from its CSV. Debian's python3-matplotlib belongs to
# /usr/bin/python3, which a pyenv or venv python3 on PATH may hide: the first one with matplotlib is used.
figures: deps
	@py=""; for p in python3 /usr/bin/python3; do \
	  if command -v "$$p" >/dev/null 2>&1 && "$$p" -c 'import matplotlib' 2>/dev/null; then py="$$p"; break; fi; \
	done; \
	if [ -z "$$py" ]; then \
	  echo "error: make figures needs python3 with matplotlib (apt-get install python3-matplotlib)" >&2; exit 1; \
	fi; \
	echo "$$py tools/figures.py $(FIGURES)"; "$$py" tools/figures.py $(FIGURES)

# Stripped binaries plus scenes, small enough to carry to a GPU machine.
dist: build
	rm -rf $(DIST_DIR)
	mkdir -p $(DIST_DIR)
	strip --strip-all -o $(DIST_DIR)/megaview $(BUILD_DIR)/megaview
	strip --strip-all -o $(DIST_DIR)/megaview_tests $(BUILD_DIR)/megaview_tests
	cp -r scenes $(DIST_DIR)/
	mkdir -p $(DIST_DIR)/assets && cp assets/*.exr assets/*.json $(DIST_DIR)/assets/
	@du -sh $(DIST_DIR)

clean:
	@case "$(BUILD_DIR)" in ""|"/"|"."|"..") echo "refusing to remove BUILD_DIR='$(BUILD_DIR)'" >&2; exit 1;; esac
	rm -rf $(BUILD_DIR) $(DIST_DIR)
