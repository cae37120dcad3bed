# qkv — one entry point: `make` builds build/qkv and the tests (in parallel, one job per
# processor), `make test` runs them, `make demo` builds and runs the demo, `make clean` removes
# build outputs. Packages come from tools/setup.sh (the README's two commands run it first).
#
# Flags given on the command line add to the required ones (`make CXXFLAGS=-O0` keeps -std=c++20,
# -I. and the libraries' flags). Each configuration builds into its own folder: the detected one
# into build/, `CUDA=0` into build/cpu-only/, `MPI=0` into build/no-mpi/, both into
# build/cpu-only-no-mpi/, and command-line CXXFLAGS/NVCCFLAGS into build/flags-HASH/ (BUILD=DIR
# overrides it all), so switching configurations never links objects built another way.

# Plain `make` builds `all` (the program and the tests), whatever rule comes first below
# (tests/make/run.sh checks it).
.DEFAULT_GOAL := all

# Parallel by default: one job per processor (JOBS), unless -j was given (on the command line or
# in MAKEFLAGS: `make -j1` builds one file at a time) or a goal is clean (`make clean all` cleans
# first). Each compile takes up to about 500 MB.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
ifeq ($(filter -j% --jobs%,$(MAKEFLAGS) $(shell printenv MAKEFLAGS)),)
ifeq ($(filter clean,$(MAKECMDGOALS)),)
MAKEFLAGS += -j$(JOBS)
endif
endif

CXX      ?= g++
# CUDA: built when nvcc exists (CUDA_HOME/bin/nvcc or on PATH); `make CUDA=0` forces CPU-only.
CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(shell command -v $(CUDA_HOME)/bin/nvcc 2>/dev/null || command -v nvcc 2>/dev/null)
CUDA_FOUND := $(if $(NVCC),1,0)
CUDA      ?= $(CUDA_FOUND)
MPI_FOUND := $(if $(shell pkg-config --exists ompi && echo yes),1,0)
MPI       ?= $(MPI_FOUND)
CONFIG_NAME := $(strip $(if $(filter-out $(CUDA_FOUND),$(CUDA)),$(if $(filter 1,$(CUDA)),cuda,cpu-only)) \
                 $(if $(filter-out $(MPI_FOUND),$(MPI)),$(if $(filter 1,$(MPI)),mpi,no-mpi)))
CONFIG_NAME := $(subst $(eval) ,-,$(CONFIG_NAME))
ifneq ($(filter command line,$(origin CXXFLAGS) $(origin NVCCFLAGS)),)
CONFIG_NAME := $(CONFIG_NAME)$(if $(CONFIG_NAME),-)flags-$(shell printf '%s|%s' '$(CXXFLAGS)' '$(NVCCFLAGS)' | md5sum | cut -c1-8)
endif
BUILD    ?= build$(if $(CONFIG_NAME),/$(CONFIG_NAME))
PKGS     := openblas fmt stb harfbuzz nlohmann_json CLI11
# The libraries' flags come from pkg-config unless given (tools/gpu_deps.sh gives them on a
# machine that has the libraries unpacked from .deb files but no pkg-config).
ifeq ($(origin DEPS_CFLAGS),undefined)
DEPS_CFLAGS := $(shell pkg-config --cflags $(PKGS))
endif
ifeq ($(origin DEPS_LIBS),undefined)
DEPS_LIBS := $(shell pkg-config --libs $(PKGS))
endif
CXXFLAGS ?= -O2
override CXXFLAGS += -std=c++20 -Wall -Wextra -I. $(DEPS_CFLAGS) -MMD -MP
# glibc's vector maths (libmvec) for the fused attention kernels; threads (framework/cpu/thread_pool.*).
SYS_LIBS := -lmvec -lpthread
override LDLIBS += $(DEPS_LIBS) $(SYS_LIBS)

# The CPU backend's loops: GCC 12's -O2 vectorises only loops whose trip count needs no scalar
# remainder; the "cheap" cost model lets every elementwise loop use SIMD. Values do not change:
# there is no fast-math, so floating-point sums keep their order. -fno-math-errno lets sqrt
# vectorise (no errno is read; the values are IEEE's either way). -ffp-contract=off (GCC's C++
# default is fast) keeps a multiply and an add two roundings even in a build for a processor with
# FMA, so the loops' AVX2 copies and their tests hold there too. Large elementwise, softmax,
# LayerNorm and Adam loops and gemms are split across threads (framework/cpu/thread_pool.h).
$(BUILD)/obj/framework/cpu/cpu_backend.o: override CXXFLAGS += -fvect-cost-model=cheap -fno-math-errno -ffp-contract=off
# The fused attention kernels (their tiles run in parallel, on the same threads).
$(BUILD)/obj/framework/cpu/cpu_attention.o: override CXXFLAGS += -fvect-cost-model=cheap -ffp-contract=fast
# The exp rows (softmax, cross-entropy, attention): a difference and a scaling stay two roundings.
$(BUILD)/obj/framework/cpu/vector_exp.o: override CXXFLAGS += -fno-math-errno -ffp-contract=off

# Data-parallel training (framework/distributed.cpp): OpenMPI when pkg-config finds it (`make
# MPI=0` builds without; --data-parallel then fails with one line), and NCCL for CUDA tensors when
# CUDA is built and $(CUDA_HOME)/include/nccl.h exists. A change of either rebuilds distributed.o.
ifeq ($(MPI),1)
MPI_CFLAGS := -DQKV_WITH_MPI -DOMPI_SKIP_MPICXX=1 $(shell pkg-config --cflags ompi)
SYS_LIBS   += $(shell pkg-config --libs ompi)
endif
DIST_FLAGS_FILE := $(BUILD)/distributed.flags

# The engine, framework/, is a library of its own (libqkv_framework.a) with its own test program,
# linked against it alone: framework/ code that used data/, models/, train/ or tools/ would not
# link, and an #include of them fails the layer check below. Everything else but train/ (the
# program) and tests/ goes into libqkv.a, with the experiments' measurements below.
FRAMEWORK_SRC := $(wildcard framework/*.cpp framework/cpu/*.cpp)
# The experiments' measurements (train/experiments/ROOM/, beside their commands' code) go into libqkv.a
# too, so that the tests link them without the program.
MEASURE_SRC := train/experiments/cues/cue_analysis.cpp train/experiments/probe/sense_probe.cpp \
               train/experiments/scaling/scaling_experiment.cpp train/experiments/tutorial/tutorial_example.cpp
LIB_SRC  := $(FRAMEWORK_SRC) $(wildcard data/*.cpp models/*.cpp tools/render/*.cpp) $(MEASURE_SRC)
APP_SRC  := $(filter-out $(MEASURE_SRC),$(wildcard train/*/*.cpp train/experiments/*/*.cpp))
FRAMEWORK_TEST_SRC := tests/main.cpp $(wildcard tests/engine/*.cpp)
TEST_SRC := tests/main.cpp $(wildcard tests/program/*.cpp)
GPU_TEST_SRC := $(wildcard tests/gpu/*.cpp)

# CUDA: the GPU architectures built, as SASS for each and PTX for the last (newer GPUs JIT-compile
# it). By default those of the GPUs in this machine (nvidia-smi's compute capability), or, where
# none is found, sm_75 and its PTX, which every GPU from Turing (2018) on runs. `make
# CUDA_ARCHS="80 90"` chooses; a change of architectures rebuilds the CUDA objects.
CUDA_SRC  := $(wildcard framework/cuda/*.cu)
# A CPU-only build on a machine that has nvcc says so when asked for --device cuda.
ifeq ($(CUDA)$(CUDA_FOUND),01)
override CXXFLAGS += -DQKV_CPU_ONLY_BESIDE_NVCC
endif
ifeq ($(CUDA),1)
ifneq ($(CUDA_SRC),)
ifeq ($(origin CUDA_ARCHS),undefined)
CUDA_ARCHS := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d '. ' | grep -xE '[0-9]+' | sort -un)
CUDA_ARCHS := $(if $(CUDA_ARCHS),$(CUDA_ARCHS),75)
endif
NVCCFLAGS ?= -O2
override NVCCFLAGS += -std=c++20 -I. $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
             -gencode arch=compute_$(lastword $(CUDA_ARCHS)),code=compute_$(lastword $(CUDA_ARCHS))
LIB_CU_OBJ := $(CUDA_SRC:%.cu=$(BUILD)/obj/%.o)
CUDA_FLAGS_FILE := $(BUILD)/cuda.flags
$(shell mkdir -p $(BUILD); echo "$(CUDA_ARCHS)" | cmp -s - $(CUDA_FLAGS_FILE) 2>/dev/null || echo "$(CUDA_ARCHS)" >$(CUDA_FLAGS_FILE))
$(LIB_CU_OBJ): $(CUDA_FLAGS_FILE)
override LDLIBS += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lcudart
override CXXFLAGS += -DQKV_WITH_CUDA
NCCL       ?= $(if $(filter 1,$(MPI)),$(if $(wildcard $(CUDA_HOME)/include/nccl.h),1,0),0)
ifeq ($(NCCL),1)
NCCL_CFLAGS := -DQKV_WITH_NCCL -I$(CUDA_HOME)/include
override LDLIBS += -lnccl
endif
endif
endif

# Unity build (UNITY=1, the default): each group of sources below compiles as one translation unit,
# $(BUILD)/unity/GROUP.cpp, which #includes the group's files in order. The headers they share
# (CLI11, nlohmann-json, fmt, the standard library) are then parsed, and their inline functions and
# templates compiled, once per group instead of once per file: CLI11 alone costs about 10 s in every
# file that includes it. A fresh `make CUDA=0 build/cpu-only/qkv` on 2 cores took 3 min 11 s file by
# file and about 1 min 20 s in groups (RESULTS.md). Error messages still name the original file
# and line. `make UNITY=0` compiles file by file (quicker when editing one file of a big group); the
# fuzz and emulated-GPU builds below compile the files they need on their own. Files with flags of
# their own (the CPU kernels, distributed.cpp) stay outside the groups. train/ (the program) is two
# groups, alternate files each, so that 2 cores share it.
UNITY ?= 1
OWN_FLAGS_SRC := framework/cpu/cpu_backend.cpp framework/cpu/cpu_attention.cpp framework/distributed.cpp
ifeq ($(UNITY),1)
UNITY_GROUPS := framework lib app_a app_b
UNITY_framework := $(filter-out $(OWN_FLAGS_SRC),$(FRAMEWORK_SRC))
UNITY_lib       := $(filter-out $(FRAMEWORK_SRC),$(LIB_SRC))
UNITY_app_a     := $(shell printf '%s\n' $(APP_SRC) | awk 'NR % 2 == 1')
UNITY_app_b     := $(shell printf '%s\n' $(APP_SRC) | awk 'NR % 2 == 0')
# Each group's source is rewritten only when its list of files changes (so it is not rebuilt each time).
unity_lines = printf '// generated by the Makefile (the unity build): the files of group $(1), in order\n'; \
              printf '\#include "%s"\n' $(UNITY_$(1))
$(foreach g,$(UNITY_GROUPS),$(shell mkdir -p $(BUILD)/unity; { $(call unity_lines,$(g)); } | cmp -s - $(BUILD)/unity/$(g).cpp \
  || { $(call unity_lines,$(g)); } >$(BUILD)/unity/$(g).cpp))
FRAMEWORK_OBJ := $(BUILD)/obj/unity/framework.o $(filter $(OWN_FLAGS_SRC:%.cpp=$(BUILD)/obj/%.o),$(FRAMEWORK_SRC:%.cpp=$(BUILD)/obj/%.o))
LIB_OBJ  := $(FRAMEWORK_OBJ) $(BUILD)/obj/unity/lib.o $(LIB_CU_OBJ)
APP_OBJ  := $(BUILD)/obj/unity/app_a.o $(BUILD)/obj/unity/app_b.o
else
FRAMEWORK_OBJ := $(FRAMEWORK_SRC:%.cpp=$(BUILD)/obj/%.o)
LIB_OBJ  := $(LIB_SRC:%.cpp=$(BUILD)/obj/%.o) $(LIB_CU_OBJ)
APP_OBJ  := $(APP_SRC:%.cpp=$(BUILD)/obj/%.o)
endif
FRAMEWORK_OBJ += $(LIB_CU_OBJ)

# distributed.o is rebuilt whenever MPI, NCCL or their flags change (the file holds the last setting).
DIST_FLAGS := MPI=$(MPI) NCCL=$(NCCL) $(MPI_CFLAGS) $(NCCL_CFLAGS)
$(shell mkdir -p $(BUILD); echo "$(DIST_FLAGS)" | cmp -s - $(DIST_FLAGS_FILE) 2>/dev/null || echo "$(DIST_FLAGS)" >$(DIST_FLAGS_FILE))
$(BUILD)/obj/framework/distributed.o: $(DIST_FLAGS_FILE)
$(BUILD)/obj/framework/distributed.o: override CXXFLAGS += $(MPI_CFLAGS) $(NCCL_CFLAGS)
TEST_OBJ := $(TEST_SRC:%.cpp=$(BUILD)/obj/%.o)
FRAMEWORK_TEST_OBJ := $(FRAMEWORK_TEST_SRC:%.cpp=$(BUILD)/obj/%.o)
GPU_TEST_OBJ := $(GPU_TEST_SRC:%.cpp=$(BUILD)/obj/%.o)
FRAMEWORK_LIB := $(BUILD)/libqkv_framework.a
LIB      := $(BUILD)/libqkv.a
# --whole-archive keeps self-registering pieces (the CUDA backend) in the link.
LINK_LIBS := -Wl,--whole-archive $(LIB) $(FRAMEWORK_LIB) -Wl,--no-whole-archive

.PHONY: all test test-busy gpu-test demo clean
all: $(BUILD)/qkv $(BUILD)/qkv_framework_tests $(BUILD)/qkv_tests $(if $(LIB_CU_OBJ),$(BUILD)/qkv_gpu_tests)

$(BUILD)/obj/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(BUILD)/obj/unity/%.o: $(BUILD)/unity/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

# The explorer page (tools/explorer/explorer.html) becomes a C++ raw string literal that
# train/cli/explore.cpp includes, so build/qkv carries the page with it.
$(BUILD)/gen/explorer_page.inc: tools/explorer/explorer.html
	@mkdir -p $(dir $@)
	{ printf 'R"QKVPAGE('; cat $<; printf ')QKVPAGE"\n'; } >$@.tmp && mv $@.tmp $@

# The demo's page (tools/demo/index.html) the same way, for train/cli/demo.cpp, less its leading
# comment (up to the first line that ends with "-->"), which is for people reading the template.
$(BUILD)/gen/demo_page.inc: tools/demo/index.html
	@mkdir -p $(dir $@)
	{ printf 'R"QKVPAGE('; sed '0,/-->$$/d' $<; printf ')QKVPAGE"\n'; } >$@.tmp && mv $@.tmp $@
# The recorded ablation grid the demo draws (tools/demo/ablation_grid.tsv), the same way.
$(BUILD)/gen/demo_grid.inc: tools/demo/ablation_grid.tsv
	@mkdir -p $(dir $@)
	{ printf 'R"QKVGRID('; cat $<; printf ')QKVGRID"\n'; } >$@.tmp && mv $@.tmp $@
# train/experiments/explorer/explorer_page.cpp and train/experiments/demo/demo.cpp include them (in either build, unity or file by file).
$(APP_OBJ): $(BUILD)/gen/explorer_page.inc $(BUILD)/gen/demo_page.inc $(BUILD)/gen/demo_grid.inc
$(APP_OBJ): override CXXFLAGS += -I$(BUILD)/gen

$(BUILD)/obj/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@

# The layer check: framework/ includes nothing from the folders above it.
$(BUILD)/framework_layers.ok: $(wildcard framework/*.h framework/*.cpp framework/cpu/* framework/cuda/*)
	@mkdir -p $(dir $@)
	@if grep -nE '^\s*#\s*include\s*"(\.\./)*(data|models|train|tools)/' $^; then \
	  echo "framework/ must not include data/, models/, train/ or tools/ (above)"; exit 1; fi
	@touch $@

# models/ and data/ include nothing from train/ or tools/, and the row layouts (with the block and
# the config they read) never the translator that uses them.
$(BUILD)/models_layers.ok: $(wildcard models/*.h models/*.cpp data/*.h data/*.cpp)
	@mkdir -p $(dir $@)
	@if grep -nE '^\s*#\s*include\s*"(\.\./)*(train|tools)/' $^ \
	  || grep -nE '^\s*#\s*include\s*"models/translator\.h"' $(filter models/row_layouts.h models/block.h models/translator_config.h,$^); then \
	  echo "models/ and data/ must not include train/ or tools/ (above), nor the row layouts the translator"; exit 1; fi
	@touch $@

# train/'s layers: run/ (the training run) includes nothing from experiments/ or cli/,
# experiments/ (what the commands share) nothing from cli/, and no command includes another: a file
# of cli/ includes only cli/commands.h (the options and validators every command shares).
$(BUILD)/train_layers.ok: $(wildcard train/*/*.h train/*/*.cpp train/experiments/*/*.h train/experiments/*/*.cpp)
	@mkdir -p $(dir $@)
	@if grep -nE '^\s*#\s*include\s*"train/(cli|experiments)/' $(filter train/run/%,$^) \
	  || grep -nE '^\s*#\s*include\s*"train/cli/' $(filter train/experiments/%,$^) \
	  || grep -nE '^\s*#\s*include\s*"train/cli/' $(filter train/cli/%,$^) | grep -v 'train/cli/commands\.h"' \
	  || grep -nE '^\s*#\s*include\s*"train/(run|cli)/' $(MEASURE_SRC) $(MEASURE_SRC:.cpp=.h); then \
	  echo "train/: run/ must not include experiments/ or cli/, experiments/ not cli/, a command no other command, and a measurement in libqkv.a not run/ or cli/"; \
	  exit 1; fi
	@touch $@

$(FRAMEWORK_LIB): $(FRAMEWORK_OBJ) $(BUILD)/framework_layers.ok Makefile
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $(FRAMEWORK_OBJ)

# (the archives are remade when the Makefile changes: what goes into which may have changed)
$(LIB): $(filter-out $(FRAMEWORK_OBJ),$(LIB_OBJ)) $(BUILD)/models_layers.ok Makefile
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $(filter %.o,$^)

$(BUILD)/qkv: $(APP_OBJ) $(LIB) $(FRAMEWORK_LIB) $(BUILD)/train_layers.ok
	$(CXX) -o $@ $(APP_OBJ) $(LINK_LIBS) $(LDLIBS)

# The engine's own tests, linked against libqkv_framework.a alone.
$(BUILD)/qkv_framework_tests: $(FRAMEWORK_TEST_OBJ) $(FRAMEWORK_LIB)
	$(CXX) -o $@ $(FRAMEWORK_TEST_OBJ) -Wl,--whole-archive $(FRAMEWORK_LIB) -Wl,--no-whole-archive $(LDLIBS)

$(BUILD)/qkv_tests: $(TEST_OBJ) $(LIB) $(FRAMEWORK_LIB)
	$(CXX) -o $@ $(TEST_OBJ) $(LINK_LIBS) $(LDLIBS)

# CPU/GPU parity tests (tests/gpu/); prints "GPU tests skipped: ..." and succeeds without a GPU.
$(BUILD)/qkv_gpu_tests: $(GPU_TEST_OBJ) $(LIB) $(FRAMEWORK_LIB)
	$(CXX) -o $@ $(GPU_TEST_OBJ) $(LINK_LIBS) $(LDLIBS)

gpu-test: $(BUILD)/qkv_gpu_tests
	$(BUILD)/qkv_gpu_tests

# ---- fuzzing (tests/fuzz/): libFuzzer harnesses for the checkpoint reader, the dataset loader, the
# training-state reader of --resume and the explorer page's data embedding. `make fuzz` builds them
# with clang, ASan and UBSan and runs each for FUZZ_SECONDS; `make test` replays the committed seed
# corpus (and past findings) through a g++ build of the same harnesses.
FUZZ_SECONDS ?= 60
FUZZ_CXX     ?= clang++
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CXXFLAGS := -g -O1 -std=c++20 -I. $(DEPS_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -Wno-unknown-pragmas -MMD -MP
# The pieces of train/ (the program) that harnesses read: the training state, the run's config and
# the explorer data's embedding.
FUZZ_APP_SRC := train/run/training_run.cpp train/run/run_state.cpp train/run/state_fields.cpp train/run/state_options.cpp train/run/run_config.cpp train/run/run_folder.cpp train/experiments/explorer/explore_data.cpp
FUZZ_LIB_SRC := $(wildcard framework/*.cpp framework/cpu/*.cpp data/*.cpp models/*.cpp) $(FUZZ_APP_SRC)
FUZZ_LIB_OBJ := $(FUZZ_LIB_SRC:%.cpp=$(FUZZ_DIR)/obj/%.o)
FUZZ_TARGETS := checkpoint dataset train_state explorer_data

# The objects are named only in a pattern rule's prerequisites: without this make would take them
# for intermediate files and delete them after each link, compiling everything again next time.
.SECONDARY: $(FUZZ_LIB_OBJ)
$(FUZZ_DIR)/obj/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) -c $< -o $@

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.cpp $(FUZZ_LIB_OBJ)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJ) $(DEPS_LIBS) -lmvec -lpthread

FUZZ_APP_OBJ := $(FUZZ_APP_SRC:%.cpp=$(BUILD)/obj/%.o)
$(BUILD)/fuzz_replay_%: tests/fuzz/fuzz_%.cpp tests/fuzz/replay.cpp $(FUZZ_APP_OBJ) $(LIB) $(FRAMEWORK_LIB)
	$(CXX) $(CXXFLAGS) -o $@ tests/fuzz/fuzz_$*.cpp tests/fuzz/replay.cpp $(FUZZ_APP_OBJ) $(LINK_LIBS) $(LDLIBS)

# The C++ and CUDA layout (.clang-format, clang-format 14 as Debian 12 ships it): `make format`
# rewrites every file in place; `make format-check` (part of `make test`) names each file that
# differs and fails. Another clang-format version lays some lines out differently, so the check
# says so and is skipped there rather than failing on a correct tree.
FORMAT_FILES = $(sort $(shell find framework models train data tools tests -name '*.cpp' -o -name '*.h' -o -name '*.cu'))
CLANG_FORMAT ?= clang-format
.PHONY: format format-check
format:
	$(CLANG_FORMAT) -i $(FORMAT_FILES)
format-check:
	@command -v $(CLANG_FORMAT) >/dev/null || { echo "format-check: $(CLANG_FORMAT) not found (bash tools/setup.sh installs it)"; exit 1; }
	@if ! $(CLANG_FORMAT) --version | grep -q 'version 14\.'; then echo "format-check skipped: $$($(CLANG_FORMAT) --version) is not the clang-format 14 the layout is checked with"; exit 0; fi; \
	bad=0; for f in $(FORMAT_FILES); do \
	  $(CLANG_FORMAT) $$f | cmp -s - $$f || { echo "$$f: not laid out as .clang-format says (make format rewrites it)"; bad=1; }; \
	done; \
	[ $$bad -eq 0 ] && echo "format-check: $(words $(FORMAT_FILES)) files laid out as .clang-format says"; exit $$bad

.PHONY: fuzz fuzz-replay
fuzz: $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_DIR)/corpus-$$t; \
	  echo "== fuzz_$$t for $(FUZZ_SECONDS)s (log: $(FUZZ_DIR)/$$t.log)"; \
	  $(FUZZ_DIR)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -max_len=1048576 -rss_limit_mb=4096 -timeout=20 \
	    -dict=tests/fuzz/$$t.dict -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/$$t- \
	    $(FUZZ_DIR)/corpus-$$t tests/fuzz/corpus/$$t >$(FUZZ_DIR)/$$t.log 2>&1; status=$$?; \
	  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|ERROR|SUMMARY|^artifact_prefix|Test unit written" $(FUZZ_DIR)/$$t.log; \
	  [ $$status -eq 0 ] || { echo "fuzz_$$t found a problem (exit $$status): see $(FUZZ_DIR)/$$t.log"; exit 1; }; \
	done

fuzz-replay: $(FUZZ_TARGETS:%=$(BUILD)/fuzz_replay_%)
	@for t in $(FUZZ_TARGETS); do printf 'fuzz corpus %s: ' $$t; $(BUILD)/fuzz_replay_$$t tests/fuzz/corpus/$$t/* || exit 1; done

# The Makefile's own checks (tests/make/run.sh), the layout of every C++ file (format-check), no function in any C++ folder longer than 80
# lines (tests/function_length.py), the grammar's tests, the PyTorch benchmark's own check (where
# /usr/bin/python3 has torch), unit tests (doctest), then the program's bad-input checks,
# train/README.md's option list of every command against its --help (tests/readme_options.py), --threads and
# QKV_THREADS (tests/cli/threads.sh), a training run killed at each of its file operations and
# resumed (tests/cli/kills.sh, with strace), crafted states, checkpoints, outputs and lines
# (tests/cli/hostile.sh), the explorer page in headless Chromium (skipped where it is not
# installed), data-parallel training with 2 MPI ranks (skipped in a build without MPI), the fuzz
# corpus replay, then the GPU tests (they report "skipped" and pass where there is no GPU or no
# CUDA build), then the same GPU tests against the CUDA sources on an emulated device
# (tests/gpu/emu/; about a minute).
test: $(BUILD)/qkv $(BUILD)/qkv_framework_tests $(BUILD)/qkv_tests $(if $(LIB_CU_OBJ),$(BUILD)/qkv_gpu_tests)
	bash tests/make/run.sh
	$(MAKE) --no-print-directory format-check
	python3 tests/function_length.py --self-test
	python3 tests/function_length.py
	python3 -m unittest tests/test_grammar.py
	@if /usr/bin/python3 -c 'import torch' 2>/dev/null; then /usr/bin/python3 tools/bench_pytorch.py --check-only; \
	else echo "bench_pytorch.py check skipped: no torch for /usr/bin/python3"; fi
	$(BUILD)/qkv_framework_tests
	$(BUILD)/qkv_tests
	QKV=$(BUILD)/qkv bash tests/cli/run.sh
	QKV=$(BUILD)/qkv python3 tests/readme_options.py
	QKV=$(BUILD)/qkv bash tests/cli/threads.sh
	QKV=$(BUILD)/qkv bash tests/cli/kills.sh
	QKV=$(BUILD)/qkv bash tests/cli/hostile.sh
	QKV=$(BUILD)/qkv bash tests/browser/run.sh
	QKV=$(BUILD)/qkv bash tests/dp/run.sh
	$(MAKE) --no-print-directory fuzz-replay
	$(if $(LIB_CU_OBJ),$(BUILD)/qkv_gpu_tests,@echo "GPU tests skipped: built without CUDA (CUDA=0, or nvcc not found)")
	$(MAKE) --no-print-directory gpu-emu-test

# The doctest suites and the threads and kill tests with a spinner on every processor (tests/busy.sh).
test-busy: $(BUILD)/qkv $(BUILD)/qkv_framework_tests $(BUILD)/qkv_tests
	BUILD=$(BUILD) bash tests/busy.sh

# The demo trains on the CPU, so where CUDA would be built but no build/qkv exists yet, `make demo`
# builds and runs the CPU-only program instead (no nvcc: a faster first run), and links build/qkv
# to it so that the README's commands work; `make` later replaces the link with the CUDA program.
# A CUDA build that exists is used as it is. The demo says which program it runs.
ifneq ($(LIB_CU_OBJ),)
ifneq ($(shell test -L $(BUILD)/qkv && echo link),)
$(shell rm -f $(BUILD)/qkv)
endif
endif
ifeq ($(and $(LIB_CU_OBJ),$(if $(wildcard $(BUILD)/qkv),,not-built-yet)),)
comma := ,
demo: $(BUILD)/qkv
	$(if $(filter build/%,$(BUILD)),@if [ ! -e build/qkv ] || [ -L build/qkv ]; then ln -sfn $(patsubst build/%,%,$(BUILD))/qkv build/qkv; fi)
	@echo "make demo: running $(BUILD)/qkv ($(if $(LIB_CU_OBJ),built with CUDA,CPU only$(if $(filter 1,$(CUDA_FOUND)),$(comma) although nvcc is installed: make builds the CUDA one))$(if $(filter build/%,$(BUILD)),; build/qkv links to it))"
	$(BUILD)/qkv demo --out demo_out
else
demo:
	@$(MAKE) --no-print-directory CUDA=0 demo
endif

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJ:.o=.d) $(APP_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(FRAMEWORK_TEST_OBJ:.o=.d) $(GPU_TEST_OBJ:.o=.d)
-include $(FUZZ_LIB_OBJ:.o=.d) $(FUZZ_APP_OBJ:.o=.d)

# ---- gpu-emu-test: the GPU tests against framework/cuda/*.cu emulated on the CPU (no GPU, no
# nvcc needed). tests/gpu/emu/translate.py rewrites each .cu into C++ under build/emu/src/, g++
# compiles it against the emulated runtime and cuBLAS (tests/gpu/emu/), and the program links the
# normal non-CUDA library objects. EMU_ASAN=1 adds AddressSanitizer (build/emu-asan/). See
# tests/gpu/emu/README.md.
EMU_ASAN     ?= 0
EMU_DIR      := $(BUILD)/emu$(if $(filter 1,$(EMU_ASAN)),-asan)
EMU_SANITIZE := $(if $(filter 1,$(EMU_ASAN)),-fsanitize=address -fno-omit-frame-pointer -g)
EMU_CU_CPP   := $(CUDA_SRC:framework/cuda/%.cu=$(EMU_DIR)/src/%.cpp)
EMU_OBJ      := $(EMU_CU_CPP:%.cpp=%.o) $(EMU_DIR)/obj/emu_runtime.o $(EMU_DIR)/obj/emu_cublas.o \
                $(EMU_DIR)/obj/test_gpu.o
EMU_CXXFLAGS := -Itests/gpu/emu/include $(filter-out -DQKV_WITH_CUDA,$(CXXFLAGS)) -DQKV_WITH_CUDA \
                -include tests/gpu/emu/cuda_emu.h $(EMU_SANITIZE)

.PHONY: gpu-emu-test
.PRECIOUS: $(EMU_DIR)/src/%.cpp
gpu-emu-test: $(EMU_DIR)/qkv_gpu_tests_emu $(EMU_DIR)/qkv_emu $(BUILD)/qkv
	ASAN_OPTIONS=detect_leaks=0 $(EMU_DIR)/qkv_gpu_tests_emu
	ASAN_OPTIONS=detect_leaks=0 QKV=$(BUILD)/qkv QKV_EMU=$(EMU_DIR)/qkv_emu bash tests/gpu/emu/cli_emu.sh

# The emulated programs take a distributed.o without NCCL (it would need the real CUDA runtime).
EMU_LIB_OBJ  := $(filter-out $(BUILD)/obj/framework/distributed.o $(LIB_CU_OBJ),$(LIB_OBJ)) \
                $(EMU_DIR)/obj/distributed.o
$(EMU_DIR)/obj/distributed.o: framework/distributed.cpp $(DIST_FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $(MPI_CFLAGS) -c $< -o $@

$(EMU_DIR)/qkv_gpu_tests_emu: $(EMU_OBJ) $(EMU_LIB_OBJ)
	$(CXX) $(EMU_SANITIZE) -o $@ $^ $(DEPS_LIBS) $(SYS_LIBS)

# The qkv program itself on the emulated device, for the CLI's --device cuda checks.
$(EMU_DIR)/qkv_emu: $(filter-out $(EMU_DIR)/obj/test_gpu.o,$(EMU_OBJ)) $(APP_OBJ) $(EMU_LIB_OBJ)
	$(CXX) $(EMU_SANITIZE) -o $@ $^ $(DEPS_LIBS) $(SYS_LIBS)

$(EMU_DIR)/src/%.cpp: framework/cuda/%.cu tests/gpu/emu/translate.py
	python3 tests/gpu/emu/translate.py $< $@

$(EMU_DIR)/src/%.o: $(EMU_DIR)/src/%.cpp
	$(CXX) $(EMU_CXXFLAGS) -c $< -o $@

$(EMU_DIR)/obj/%.o: tests/gpu/emu/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(EMU_CXXFLAGS) -c $< -o $@

$(EMU_DIR)/obj/test_gpu.o: tests/gpu/test_gpu.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(EMU_CXXFLAGS) -c $< -o $@

-include $(EMU_OBJ:.o=.d)
