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
#
# qkv's Translator::forward skips the last layer's source rows (queries, W_o, LayerNorm and
# feed-forward; the head reads only the target rows). The twin, as written, computes them.
# --skip-source-rows runs the same skip in PyTorch, so that both sides do the same arithmetic.
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

SIZES = {  # name: (B, S, T_tgt, D, K, F, V), as in train/cli/bench.cpp
    "toy": (64, 10, 11, 64, 64, 256, 300),
    "large": (16, 64, 64, 256, 256, 1024, 1024),
}


def forward_skipping_source_rows(model, source, target_input, keep):
    """The twin's forward with the last layer's queries and everything after attention over the
    target rows only, as qkv runs it; the same logits as model(...)[0] to float rounding."""
    S = model.S
    x = torch.cat([model.src_embed(source), model.tgt_embed(target_input)], dim=1) + model.pos_embed.weight
    same = lambda rows: rows  # noqa: E731  (absolute positions: no rotary turn, no ALiBi bias)
    for block in model.blocks[:-1]:
        x, _ = block(x, keep, same, None)
    last = model.blocks[-1]
    x_queries = x[:, S:, :]                              # (B, T_tgt, D)
    keep_target = keep[:, S:, :]                         # (B, T_tgt, T)
    if last.attention == "learned":
        a, _ = pytorch_twin.attend(last.attn.W_q(x_queries), last.attn.W_k(x), last.attn.W_v(x), keep_target)
        mixed = last.attn.W_o(a)
    else:
        mixed, _ = pytorch_twin.attend(x_queries, x, x, keep_target)
    h = last.ln1(x_queries + mixed)
    return model.head(h + last.ffn(h))                   # (B, T_tgt, V)


def bench(name, steps, threads, skip_source_rows):
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
        if skip_source_rows:
            logits = forward_skipping_source_rows(model, source, target, keep)
        else:
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
    rows = ", source rows skipped" if skip_source_rows else ""
    print(f"  {name:<6} pytorch {torch.__version__} cpu ({threads} threads, OpenBLAS threads {blas}{rows}): {seconds * 1e3:8.2f} ms/step  {tokens:10.0f} tokens/s")
    print(f"RESULT pytorch {name} cpu {seconds * 1e3:.4f}")


def check_skip():
    """forward_skipping_source_rows against the twin's own forward, in float64, both layer counts."""
    for layers in (1, 2):
        for attention in ("learned", "static"):
            config = {"attention": attention, "d_model": 8, "d_k": 6, "d_ff": 16, "activation": "relu",
                      "source_vocab": 20, "target_vocab": 20, "max_source": 5, "max_target": 4, "layers": layers}
            torch.manual_seed(layers)
            model = pytorch_twin.Translator(config).double()
            lengths = [5, 3]
            source, target = torch.randint(4, 20, (2, 5)), torch.randint(4, 20, (2, 4))
            full, _ = model(source, target, lengths)
            skipped = forward_skipping_source_rows(model, source, target, model.attention_mask(lengths))
            if not torch.allclose(full, skipped, rtol=1e-12, atol=1e-12):
                raise SystemExit(f"--skip-source-rows changes the logits ({layers} layers, {attention})")
    print("check: skipping the last layer's source rows gives the twin's logits (1 and 2 layers)")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=0,
                        help="torch threads and OpenBLAS threads (0 = the defaults of both)")
    parser.add_argument("--blas-default", action="store_true",
                        help="leave OpenBLAS's thread count at its default (one per core)")
    parser.add_argument("--skip-source-rows", action="store_true",
                        help="skip the last layer's source rows, as qkv does (the same logits)")
    parser.add_argument("--check", action="store_true",
                        help="first check that the skipping forward gives the twin's logits")
    parser.add_argument("--check-only", action="store_true",
                        help="only that check (make test runs it where torch is installed)")
    args = parser.parse_args()
    if args.check or args.check_only:
        check_skip()
    if args.check_only:
        return
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    for name in SIZES:
        bench(name, args.steps * 5 if name == "toy" else args.steps, torch.get_num_threads(), args.skip_source_rows)


if __name__ == "__main__":
    main()
