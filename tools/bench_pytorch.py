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
import itertools
import os
import sys
import time

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--steps", type=int, default=20)
parser.add_argument("--threads", type=int, default=0,
                    help="torch threads and OpenBLAS threads (0 = the defaults of both)")
parser.add_argument("--blas-default", action="store_true",
                    help="leave OpenBLAS's thread count at its default (one per core)")
parser.add_argument("--skip-source-rows", action="store_true",
                    help="skip the last layer's source rows, as qkv does (the same logits)")
parser.add_argument("--positions", choices=("rotary", "absolute"), default="rotary",
                    help="rotary (the shipped model's, as `qkv bench` times it) or absolute")
parser.add_argument("--check", action="store_true",
                    help="first check that the bench's forward gives the twin's logits")
parser.add_argument("--check-only", action="store_true",
                    help="only that check (make test runs it where torch is installed)")
ARGS = parser.parse_args()
if ARGS.threads > 0 and not ARGS.blas_default:
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pytorch_twin  # noqa: E402

SIZES = {  # name: (B, S, T_tgt, D, K, F, V), as in train/cli/bench.cpp
    "toy": (64, 10, 11, 64, 64, 256, 300),
    "large": (16, 64, 64, 256, 256, 1024, 1024),
}


def forward_full_length(model, source, target_input, keep, turn, skip_source_rows):
    """The twin's forward for full-length sentences with `turn`'s cached tables (rotary positions are
    then the slots themselves). skip_source_rows: the last layer's queries and everything after
    attention over the target rows only, as qkv runs it; the same logits to float rounding."""
    x = model.embed(source, target_input)
    for layer, block in enumerate(model.blocks):
        last = skip_source_rows and layer == len(model.blocks) - 1
        x, _ = block(x, keep, turn, None, model.S if last else 0)
    return model.head(x if skip_source_rows else x[:, model.S:, :])  # (B, T_tgt, V)


def bench(name, steps, threads, skip_source_rows, positions):
    B, S, Tt, D, K, F, V = SIZES[name]
    config = {"attention": "learned", "d_model": D, "d_k": K, "d_ff": F, "activation": "relu",
              "source_vocab": V, "target_vocab": V, "max_source": S, "max_target": Tt, "positions": positions}
    torch.manual_seed(0)
    model = pytorch_twin.Translator(config).float()
    keep = model.attention_mask([S] * B)  # the mask is built once, as qkv's costs little
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    source, target = torch.randint(4, V, (B, S)), torch.randint(4, V, (B, Tt))
    turn = model.turn(torch.arange(S + Tt), torch.float32)  # the cos and sin tables made once, as users cache them

    def step():
        opt.zero_grad()
        logits = forward_full_length(model, source, target, keep, turn, skip_source_rows)
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
    """forward_full_length, with and without the skip, against the twin's own forward in float64:
    both layer counts, learned and static attention, absolute and rotary positions."""
    for layers, attention, positions in itertools.product((1, 2), ("learned", "static"), ("absolute", "rotary")):
        config = {"attention": attention, "d_model": 8, "d_k": 6, "d_ff": 16, "activation": "relu", "layers": layers,
                  "source_vocab": 20, "target_vocab": 20, "max_source": 5, "max_target": 4, "positions": positions}
        torch.manual_seed(layers)
        model = pytorch_twin.Translator(config).double()
        lengths = [5, 3] if positions == "absolute" else [5, 5]  # rotary: the bench's full-length sentences
        source, target = torch.randint(4, 20, (2, 5)), torch.randint(4, 20, (2, 4))
        full, _ = model(source, target, lengths)
        for skip in (False, True):
            ours = forward_full_length(model, source, target, model.attention_mask(lengths),
                                       model.turn(torch.arange(model.S + model.T_tgt), torch.float64), skip)
            if not torch.allclose(full, ours, rtol=1e-12, atol=1e-12):
                raise SystemExit(f"the bench's forward changes the logits ({layers} layers, {attention}, "
                                 f"{positions}, skip {skip})")
    print("check: the bench's forward, with and without the skip, gives the twin's logits "
          "(1 and 2 layers, absolute and rotary)")


def main(args):
    if args.check or args.check_only:
        check_skip()
    if args.check_only:
        return
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    for name in SIZES:
        bench(name, args.steps * 5 if name == "toy" else args.steps, torch.get_num_threads(), args.skip_source_rows,
              args.positions)


if __name__ == "__main__":
    main(ARGS)
