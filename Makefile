# qkv — one entry point: `make` builds build/qkv and the tests, `make test` runs them,
# `make demo` sets up, builds and runs the demo, `make clean` removes build outputs.

CXX      ?= g++
BUILD    ?= build
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
CXXFLAGS += -std=c++20 -Wall -Wextra -I. $(DEPS_CFLAGS) -MMD -MP
# OpenMP (libgomp) and glibc's vector maths (libmvec) for the fused attention kernels.
SYS_LIBS := -fopenmp -lmvec -lpthread
LDLIBS   += $(DEPS_LIBS) $(SYS_LIBS)

# The CPU backend's loops: GCC 12's -O2 vectorises only loops whose trip count needs no scalar
# remainder; the "cheap" cost model lets every elementwise loop use SIMD. Values do not change:
# there is no fast-math, so floating-point sums keep their order.
$(BUILD)/obj/framework/cpu/cpu_backend.o: CXXFLAGS += -fvect-cost-model=cheap
# The fused attention kernels run their tiles in parallel with OpenMP (GCC's libgomp).
$(BUILD)/obj/framework/cpu/cpu_attention.o: CXXFLAGS += -fopenmp -fvect-cost-model=cheap -ffp-contract=fast

# Data-parallel training (framework/distributed.cpp): OpenMPI when pkg-config finds it (`make
# MPI=0` builds without; --data-parallel then fails with one line), and NCCL for CUDA tensors when
# CUDA is built and $(CUDA_HOME)/include/nccl.h exists. A change of either rebuilds distributed.o.
MPI      ?= $(if $(shell pkg-config --exists ompi && echo yes),1,0)
ifeq ($(MPI),1)
MPI_CFLAGS := -DQKV_WITH_MPI -DOMPI_SKIP_MPICXX=1 $(shell pkg-config --cflags ompi)
SYS_LIBS   += $(shell pkg-config --libs ompi)
endif
DIST_FLAGS_FILE := $(BUILD)/distributed.flags

# Everything but train/ (the program) and tests/ goes into one static library.
LIB_SRC  := $(wildcard framework/*.cpp framework/cpu/*.cpp data/*.cpp models/*.cpp tools/render/*.cpp)
APP_SRC  := $(wildcard train/*.cpp)
TEST_SRC := $(wildcard tests/*.cpp)
GPU_TEST_SRC := $(wildcard tests/gpu/*.cpp)

# CUDA: built when nvcc exists (CUDA_HOME/bin/nvcc or on PATH); `make CUDA=0` forces CPU-only.
CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(shell command -v $(CUDA_HOME)/bin/nvcc 2>/dev/null || command -v nvcc 2>/dev/null)
CUDA      ?= $(if $(NVCC),1,0)
CUDA_SRC  := $(wildcard framework/cuda/*.cu)
ifeq ($(CUDA),1)
ifneq ($(CUDA_SRC),)
NVCCFLAGS ?= -O2
NVCCFLAGS += -std=c++20 -I. -gencode arch=compute_80,code=sm_80 \
             -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
LIB_CU_OBJ := $(CUDA_SRC:%.cu=$(BUILD)/obj/%.o)
LDLIBS     += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lcudart
CXXFLAGS   += -DQKV_WITH_CUDA
NCCL       ?= $(if $(filter 1,$(MPI)),$(if $(wildcard $(CUDA_HOME)/include/nccl.h),1,0),0)
ifeq ($(NCCL),1)
NCCL_CFLAGS := -DQKV_WITH_NCCL -I$(CUDA_HOME)/include
LDLIBS      += -lnccl
endif
endif
endif

LIB_OBJ  := $(LIB_SRC:%.cpp=$(BUILD)/obj/%.o) $(LIB_CU_OBJ)

# distributed.o is rebuilt whenever MPI, NCCL or their flags change (the file holds the last setting).
DIST_FLAGS := MPI=$(MPI) NCCL=$(NCCL) $(MPI_CFLAGS) $(NCCL_CFLAGS)
$(shell mkdir -p $(BUILD); echo "$(DIST_FLAGS)" | cmp -s - $(DIST_FLAGS_FILE) 2>/dev/null || echo "$(DIST_FLAGS)" >$(DIST_FLAGS_FILE))
$(BUILD)/obj/framework/distributed.o: $(DIST_FLAGS_FILE)
$(BUILD)/obj/framework/distributed.o: CXXFLAGS += $(MPI_CFLAGS) $(NCCL_CFLAGS)
APP_OBJ  := $(APP_SRC:%.cpp=$(BUILD)/obj/%.o)
TEST_OBJ := $(TEST_SRC:%.cpp=$(BUILD)/obj/%.o)
GPU_TEST_OBJ := $(GPU_TEST_SRC:%.cpp=$(BUILD)/obj/%.o)
LIB      := $(BUILD)/libqkv.a

.PHONY: all test gpu-test demo clean
all: $(BUILD)/qkv $(BUILD)/qkv_tests $(if $(LIB_CU_OBJ),$(BUILD)/qkv_gpu_tests)

$(BUILD)/obj/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

# The explorer page (tools/explorer/explorer.html) becomes a C++ raw string literal that
# train/explore.cpp includes, so build/qkv carries the page with it.
$(BUILD)/gen/explorer_page.inc: tools/explorer/explorer.html
	@mkdir -p $(dir $@)
	{ printf 'R"QKVPAGE('; cat $<; printf ')QKVPAGE"\n'; } >$@.tmp && mv $@.tmp $@
$(BUILD)/obj/train/explore.o: $(BUILD)/gen/explorer_page.inc
$(BUILD)/obj/train/explore.o: CXXFLAGS += -I$(BUILD)/gen

# The demo's page (tools/demo/index.html) the same way, for train/inspect.cpp, less its leading
# comment (up to the first line that ends with "-->"), which is for people reading the template.
$(BUILD)/gen/demo_page.inc: tools/demo/index.html
	@mkdir -p $(dir $@)
	{ printf 'R"QKVPAGE('; sed '0,/-->$$/d' $<; printf ')QKVPAGE"\n'; } >$@.tmp && mv $@.tmp $@
$(BUILD)/obj/train/inspect.o: $(BUILD)/gen/demo_page.inc
$(BUILD)/obj/train/inspect.o: CXXFLAGS += -I$(BUILD)/gen

$(BUILD)/obj/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# --whole-archive keeps self-registering pieces (the CUDA backend) in the link.
$(BUILD)/qkv: $(APP_OBJ) $(LIB)
	$(CXX) -o $@ $(APP_OBJ) -Wl,--whole-archive $(LIB) -Wl,--no-whole-archive $(LDLIBS)

$(BUILD)/qkv_tests: $(TEST_OBJ) $(LIB)
	$(CXX) -o $@ $(TEST_OBJ) -Wl,--whole-archive $(LIB) -Wl,--no-whole-archive $(LDLIBS)

# CPU/GPU parity tests (tests/gpu/); prints "GPU tests skipped: ..." and succeeds without a GPU.
$(BUILD)/qkv_gpu_tests: $(GPU_TEST_OBJ) $(LIB)
	$(CXX) -o $@ $(GPU_TEST_OBJ) -Wl,--whole-archive $(LIB) -Wl,--no-whole-archive $(LDLIBS)

gpu-test: $(BUILD)/qkv_gpu_tests
	$(BUILD)/qkv_gpu_tests

# ---- fuzzing (tests/fuzz/): libFuzzer harnesses for the checkpoint reader and the dataset loader.
# `make fuzz` builds them with clang, ASan and UBSan and runs each for FUZZ_SECONDS; `make test`
# replays the committed seed corpus (and past findings) through a g++ build of the same harnesses.
FUZZ_SECONDS ?= 60
FUZZ_CXX     ?= clang++
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CXXFLAGS := -g -O1 -std=c++20 -I. $(DEPS_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -Wno-unknown-pragmas -MMD -MP
FUZZ_LIB_SRC := $(wildcard framework/*.cpp framework/cpu/*.cpp data/*.cpp models/*.cpp)
FUZZ_LIB_OBJ := $(FUZZ_LIB_SRC:%.cpp=$(FUZZ_DIR)/obj/%.o)
FUZZ_TARGETS := checkpoint dataset

$(FUZZ_DIR)/obj/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) -c $< -o $@

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.cpp $(FUZZ_LIB_OBJ)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJ) $(DEPS_LIBS) -lmvec -lpthread

$(BUILD)/fuzz_replay_%: tests/fuzz/fuzz_%.cpp tests/fuzz/replay.cpp $(LIB)
	$(CXX) $(CXXFLAGS) -o $@ tests/fuzz/fuzz_$*.cpp tests/fuzz/replay.cpp -Wl,--whole-archive $(LIB) -Wl,--no-whole-archive $(LDLIBS)

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

# Unit tests (doctest), then the program's bad-input checks, the explorer page in headless
# Chromium (skipped where it is not installed), data-parallel training with 2 MPI ranks (skipped
# in a build without MPI), the fuzz corpus replay, then the GPU tests (they report
# "skipped" and pass where there is no GPU or no CUDA build), then the same GPU tests against the
# CUDA sources on an emulated device (tests/gpu/emu/; about a minute).
test: $(BUILD)/qkv $(BUILD)/qkv_tests $(if $(LIB_CU_OBJ),$(BUILD)/qkv_gpu_tests)
	python3 -m unittest tests/test_grammar.py
	$(BUILD)/qkv_tests
	QKV=$(BUILD)/qkv bash tests/cli/run.sh
	QKV=$(BUILD)/qkv bash tests/browser/run.sh
	QKV=$(BUILD)/qkv bash tests/dp/run.sh
	$(MAKE) --no-print-directory fuzz-replay
	$(if $(LIB_CU_OBJ),$(BUILD)/qkv_gpu_tests,@echo "GPU tests skipped: built without CUDA (nvcc not found)")
	$(MAKE) --no-print-directory gpu-emu-test

demo: 
	bash tools/setup.sh
	$(MAKE) $(BUILD)/qkv
	$(BUILD)/qkv demo --out demo_out

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJ:.o=.d) $(APP_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(GPU_TEST_OBJ:.o=.d)
-include $(FUZZ_LIB_OBJ:.o=.d)

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
EMU_LIB_OBJ  := $(filter-out $(BUILD)/obj/framework/distributed.o,$(LIB_SRC:%.cpp=$(BUILD)/obj/%.o)) \
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
