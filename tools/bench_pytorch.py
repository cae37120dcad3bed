#!/usr/bin/python3
# tools/bench_pytorch.py — the PyTorch reference for `qkv bench`: the same translator (built by
# tools/pytorch_twin.py's classes), the same sizes and synthetic tokens, float32 on the CPU, timed
# over forward + backward + clip + AdamW. Prints "RESULT pytorch <size> cpu <ms/step>" lines.
#
# torch.set_num_threads sets only PyTorch's own OpenMP pool. Debian's torch calls OpenBLAS (the
# pthread build) for its gemms, and OpenBLAS keeps one thread per core whatever torch says: measured
# here, "1 thread" ran at 145-150% CPU. So --threads N also caps OpenBLAS at N, through its
# environment variable, which OpenBLAS reads when it loads (before `import torch`). --blas-default
# leaves OpenBLAS as it is, to measure PyTorch's out-of-the-box configuration.
import argparse
import os
import sys
import time


def _blas_threads_from_argv():
    """OpenBLAS reads OPENBLAS_NUM_THREADS once, at load, so it is set before torch is imported."""
    argv = sys.argv[1:]
    if "--blas-default" in argv:
        return
    for i, arg in enumerate(argv):
        value = arg.split("=", 1)[1] if arg.startswith("--threads=") else (
            argv[i + 1] if arg == "--threads" and i + 1 < len(argv) else None)
        if value is not None and value.isdigit() and int(value) > 0:
            os.environ["OPENBLAS_NUM_THREADS"] = value
            os.environ["OMP_NUM_THREADS"] = value


_blas_threads_from_argv()
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pytorch_twin  # noqa: E402

SIZES = {  # name: (B, S, T_tgt, D, K, F, V), as in train/bench.cpp
    "toy": (64, 10, 11, 64, 64, 256, 300),
    "large": (16, 64, 64, 256, 256, 1024, 1024),
}


def bench(name, steps, threads):
    B, S, Tt, D, K, F, V = SIZES[name]
    config = {"attention": "learned", "d_model": D, "d_k": K, "d_ff": F, "activation": "relu",
              "source_vocab": V, "target_vocab": V, "max_source": S, "max_target": Tt}
    torch.manual_seed(0)
    model = pytorch_twin.Translator(config).float()
    keep = model.attention_mask([S] * B)
    model.attention_mask = lambda lengths: keep  # the mask is built once, as qkv's costs little
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    source = torch.randint(4, V, (B, S))
    target = torch.randint(4, V, (B, Tt))

    def step():
        opt.zero_grad()
        logits, _ = model(source, target, [S] * B)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=0)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()

    step()  # warm-up
    start = time.perf_counter()
    for _ in range(steps):
        step()
    seconds = (time.perf_counter() - start) / steps
    tokens = B * (S + Tt) / seconds
    blas = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    print(f"  {name:<6} pytorch {torch.__version__} cpu ({threads} threads, OpenBLAS threads {blas}): {seconds * 1e3:8.2f} ms/step  {tokens:10.0f} tokens/s")
    print(f"RESULT pytorch {name} cpu {seconds * 1e3:.4f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=0,
                        help="torch threads and OpenBLAS threads (0 = the defaults of both)")
    parser.add_argument("--blas-default", action="store_true",
                        help="leave OpenBLAS's thread count at its default (one per core)")
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    for name in SIZES:
        bench(name, args.steps * 5 if name == "toy" else args.steps, torch.get_num_threads())


if __name__ == "__main__":
    main()
