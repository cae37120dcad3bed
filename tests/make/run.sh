#!/usr/bin/env bash
# tests/make/run.sh — checks of the Makefile itself (run by `make test`; a few seconds, builds
# nothing): plain `make` builds `all`; it compiles in unity groups (UNITY=0: file by file); it
# builds in parallel unless -j is given; nvcc builds for the machine's GPUs, or one architecture
# plus PTX without one, or CUDA_ARCHS.
set -u
cd "$(dirname "$0")/../.."
source tests/cli/lib.sh

# Run from `make test`, this script inherits that make's flags (its -j among them): drop them.
unset MAKEFLAGS MFLAGS MAKELEVEL GNUMAKEFLAGS

# make's view of the Makefile, building nothing: VAR's value after parsing, with these arguments.
value_of() {
  local var=$1
  shift
  make --no-print-directory -s BUILD="$work/b" "$@" --eval "print-value: ; @echo '\$($var)'" print-value 2>/dev/null
}
database() { make --no-print-directory -pq BUILD="$work/b" "$@" 2>/dev/null; }

# ---- the default goal is all ----
goal=$(database CUDA=0 | sed -n 's/^\.DEFAULT_GOAL := //p')
[ "$goal" = all ] && pass || fail "the default goal is '$goal', not all (make -p -q | grep DEFAULT_GOAL)"
plan=$(make --no-print-directory -n BUILD="$work/b" CUDA=0 MPI=0 2>/dev/null)
for program in qkv qkv_tests qkv_framework_tests; do
  grep -qE -- "-o $work/b/$program( |$)" <<<"$plan" && pass || fail "plain make does not link $program"
done

# ---- make demo where nvcc exists but nothing is built: the CPU-only program, linked as build/qkv (issue 36) ----
demo_plan=$(make --no-print-directory -n BUILD="$work/bb" CUDA=1 NVCC=/bin/true demo 2>/dev/null)
grep -q "CUDA=0 demo" <<<"$demo_plan" && pass || fail "make demo with nvcc and no program built does not fall back to CUDA=0: $demo_plan"
demo_plan2=$(make --no-print-directory -n BUILD=build/cpu-only CUDA=0 NVCC=/bin/true demo 2>/dev/null)
grep -q "ln -sfn cpu-only/qkv build/qkv" <<<"$demo_plan2" && grep -q "running build/cpu-only/qkv (CPU only, although nvcc is installed" <<<"$demo_plan2" &&
  grep -q "build/qkv links to it" <<<"$demo_plan2" && pass ||
  fail "make demo's CPU-only program is not linked as build/qkv, or the demo does not say which program it runs: $demo_plan2"

# ---- the unity build: each folder's files compile together, and UNITY=0 compiles them one by one ----
grep -qE -- "-c $work/b/unity/app_a.cpp" <<<"$plan" && grep -qE -- "-c $work/b/unity/framework.cpp" <<<"$plan" \
  && pass || fail "plain make does not compile the unity groups"
for f in train/*/*.cpp train/experiments/*/*.cpp framework/*.cpp models/*.cpp data/*.cpp tools/render/*.cpp; do
  case $f in framework/distributed.cpp) continue ;; esac  # its own flags: compiled alone
  n=$(cat "$work"/b/unity/*.cpp 2>/dev/null | grep -c "^#include \"$f\"$")
  [ "$n" = 1 ] || fail "$f is in $n unity groups, not 1"
done
pass
plan0=$(make --no-print-directory -n BUILD="$work/b0" CUDA=0 MPI=0 UNITY=0 2>/dev/null)
grep -qE -- "-c train/cli/main.cpp" <<<"$plan0" && ! grep -q "unity/" <<<"$plan0" \
  && pass || fail "make UNITY=0 does not compile file by file"

# ---- train/'s layers: run/ < experiments/ < cli/, and no command includes another ----
layer_check() {  # a copy of train/ with one line added to FILE; prints make's exit status
  rm -rf "$work/layers" && mkdir -p "$work/layers" && cp -r train "$work/layers/"
  echo "$2" >>"$work/layers/train/$1"
  make --no-print-directory -s -f "$PWD/Makefile" -C "$work/layers" BUILD="$work/layers/b" CUDA=0 MPI=0 \
    "$work/layers/b/train_layers.ok" >/dev/null 2>&1
  echo $?
}
[ "$(layer_check cli/attend.cpp '#include "train/experiments/probe/probe.h"')" = 0 ] && pass ||
  fail "the train layer check refuses a command that includes experiments/"
[ "$(layer_check cli/attend.cpp '#include "train/cli/commands.h"')" = 0 ] && pass ||
  fail "the train layer check refuses cli/commands.h"
[ "$(layer_check cli/attend.cpp '#include "train/cli/demo.h"')" != 0 ] && pass ||
  fail "the train layer check lets one command include another"
[ "$(layer_check run/trainer.h '#include "train/experiments/probe/probe.h"')" != 0 ] && pass ||
  fail "the train layer check lets run/ include experiments/"
[ "$(layer_check experiments/probe/probe.h '#include "train/cli/commands.h"')" != 0 ] && pass ||
  fail "the train layer check lets experiments/ include cli/"
[ "$(layer_check experiments/cues/cue_analysis.h '#include "train/run/trainer.h"')" != 0 ] && pass ||
  fail "the train layer check lets a measurement of libqkv.a include run/"
[ "$(layer_check experiments/cues/cues.cpp '#include "train/run/trainer.h"')" = 0 ] && pass ||
  fail "the train layer check refuses an experiment's report that includes run/"

# ---- models/'s layers: nothing from train/ or tools/, and the row layouts never the translator ----
models_check() {  # a copy of models/ and data/ with one line added to FILE; prints make's exit status
  rm -rf "$work/mlayers" && mkdir -p "$work/mlayers" && cp -r models data "$work/mlayers/"
  echo "$2" >>"$work/mlayers/$1"
  make --no-print-directory -s -f "$PWD/Makefile" -C "$work/mlayers" BUILD="$work/mlayers/b" CUDA=0 MPI=0 \
    "$work/mlayers/b/models_layers.ok" >/dev/null 2>&1
  echo $?
}
[ "$(models_check models/row_layouts.h '#include "framework/ops.h"')" = 0 ] && pass ||
  fail "the models layer check refuses the tree as it is"
[ "$(models_check models/row_layouts.h '#include "models/translator.h"')" != 0 ] && pass ||
  fail "the models layer check lets the row layouts include the translator"
[ "$(models_check models/translator.cpp '#include "train/run/trainer.h"')" != 0 ] && pass ||
  fail "the models layer check lets models/ include train/"
[ "$(models_check data/dataset.cpp '#include "tools/render/render.h"')" != 0 ] && pass ||
  fail "the models layer check lets data/ include tools/"

# ---- parallel unless -j is given ----
jobs=$(nproc)
jflag() { database CUDA=0 "$@" | sed -n 's/^MAKEFLAGS = //p' | grep -oE -- '-j[0-9]*' | head -1; }
[ "$(jflag)" = "-j$jobs" ] && pass || fail "plain make runs '$(jflag)', not -j$jobs"
[ "$(jflag -j1)" = "-j1" ] && pass || fail "make -j1 runs '$(jflag -j1)'"
[ "$(jflag -j3)" = "-j3" ] && pass || fail "make -j3 runs '$(jflag -j3)'"
[ "$(MAKEFLAGS=-j1 jflag)" = "-j1" ] && pass || fail "MAKEFLAGS=-j1 make runs '$(MAKEFLAGS=-j1 jflag)'"
[ "$(jflag JOBS=5)" = "-j5" ] && pass || fail "make JOBS=5 runs '$(jflag JOBS=5)'"
[ -z "$(jflag clean)" ] && pass || fail "make clean runs '$(jflag clean)' (clean must not run beside a build)"

# ---- CUDA architectures ----
# A stand-in nvidia-smi reports the GPUs (or fails, as on a machine without a driver).
mkdir -p "$work/gpus" "$work/nogpu"
printf '#!/bin/sh\nprintf "9.0\\n8.6\\n9.0\\n"\n' >"$work/gpus/nvidia-smi"
printf '#!/bin/sh\necho "NVIDIA-SMI has failed" >&2; exit 9\n' >"$work/nogpu/nvidia-smi"
chmod +x "$work/gpus/nvidia-smi" "$work/nogpu/nvidia-smi"
cuda=(CUDA=1 NVCC=/bin/false)
archs=$(PATH="$work/gpus:$PATH" value_of CUDA_ARCHS "${cuda[@]}")
[ "$archs" = "86 90" ] && pass || fail "with GPUs 9.0, 8.6, 9.0 CUDA_ARCHS is '$archs', not '86 90'"
flags=$(PATH="$work/gpus:$PATH" value_of NVCCFLAGS "${cuda[@]}")
gencode=$(grep -oE 'code=[a-z_0-9]+' <<<"$flags" | tr '\n' ' ')
[ "$gencode" = "code=sm_86 code=sm_90 code=compute_90 " ] && pass || fail "with GPUs 8.6 and 9.0 nvcc builds '$gencode'"
flags=$(PATH="$work/nogpu:$PATH" value_of NVCCFLAGS "${cuda[@]}")
gencode=$(grep -oE 'code=[a-z_0-9]+' <<<"$flags" | tr '\n' ' ')
[ "$gencode" = "code=sm_75 code=compute_75 " ] && pass || fail "without a GPU nvcc builds '$gencode', not sm_75 and its PTX"
flags=$(PATH="$work/gpus:$PATH" value_of NVCCFLAGS "${cuda[@]}" CUDA_ARCHS="80 89")
gencode=$(grep -oE 'code=[a-z_0-9]+' <<<"$flags" | tr '\n' ' ')
[ "$gencode" = "code=sm_80 code=sm_89 code=compute_89 " ] && pass || fail "CUDA_ARCHS=\"80 89\" builds '$gencode'"
# the architectures are recorded, so that a change rebuilds the CUDA objects
[ "$(cat "$work/b/cuda.flags" 2>/dev/null)" = "80 89" ] && pass || fail "build/cuda.flags holds '$(cat "$work/b/cuda.flags" 2>/dev/null)'"
deps=$(database "${cuda[@]}" CUDA_ARCHS=80 | grep -E "^$work/b/obj/framework/cuda/[a-z_]+\.o:" | grep -c "$work/b/cuda.flags")
[ "$deps" -ge 1 ] && pass || fail "the CUDA objects do not depend on cuda.flags"
[ -z "$(PATH="$work/gpus:$PATH" value_of CUDA_ARCHS CUDA=0)" ] && pass || fail "CUDA=0 still looks for GPUs"

echo "build checks: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
