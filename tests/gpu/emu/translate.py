#!/usr/bin/env python3
"""tests/gpu/emu/translate.py — turns a CUDA source into C++ for the emulator, line for line:
kernel<<<grid, block>>>(args); becomes qkv_emu::launch("file:line kernel", grid, block,
[](auto... a) { kernel(a...); }, args);  `__shared__ [__align__(A)] T name[N];` becomes per-block
storage (alignas(A)), and `#pragma unroll` is dropped. A `#line` directive keeps errors pointing at
the real .cu file.

Usage: translate.py IN.cu OUT.cpp
"""
import os
import re
import sys

IDENT = re.compile(r"[A-Za-z0-9_:]")
SHARED = re.compile(r"__shared__\s+(?:__align__\((\d+)\)\s+)?([A-Za-z_][\w:<>, ]*?)\s+([A-Za-z_]\w*)\s*(\[[^\]]+\])\s*;")


def fail(path, text, pos, why):
    line = text.count("\n", 0, pos) + 1
    sys.exit(f"{path}:{line}: translate.py: {why}")


def matching(text, pos, open_ch, close_ch, step):
    """Index of the bracket that balances the one at pos, scanning forward (step 1) or back (-1)."""
    depth = 0
    while 0 <= pos < len(text):
        if text[pos] == open_ch:
            depth += 1
        elif text[pos] == close_ch:
            depth -= 1
            if depth == 0:
                return pos
        pos += step
    return -1


def split_top(text):
    """Splits at commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def translate_launches(path, text):
    out, done = [], 0
    while True:
        open_pos = text.find("<<<", done)
        if open_pos < 0:
            break
        # the callee: an identifier, maybe with template arguments (reduce_block_kernel<T, false>)
        start = open_pos
        while start > 0 and text[start - 1].isspace():
            start -= 1
        if text[start - 1] == ">":
            start = matching(text, start - 1, ">", "<", -1)
            if start < 0:
                fail(path, text, open_pos, "unbalanced template arguments before <<<")
        while start > 0 and IDENT.match(text[start - 1]):
            start -= 1
        callee = text[start:open_pos].strip()
        if not callee:
            fail(path, text, open_pos, "no kernel name before <<<")
        # the configuration: <<<grid, block>>>, no shared memory size or stream
        close_pos, depth = open_pos + 3, 0
        while close_pos < len(text) and not (depth == 0 and text.startswith(">>>", close_pos)):
            depth += text[close_pos] in "([{"
            depth -= text[close_pos] in ")]}"
            close_pos += 1
        config = split_top(text[open_pos + 3:close_pos])
        if len(config) != 2:
            fail(path, text, open_pos, "only <<<grid, block>>> is supported (no shared memory size or stream)")
        # the arguments
        paren = close_pos + 3
        while paren < len(text) and text[paren].isspace():
            paren += 1
        if text[paren] != "(":
            fail(path, text, open_pos, "expected ( after >>>")
        end = matching(text, paren, "(", ")", 1)
        if end < 0:
            fail(path, text, open_pos, "unbalanced kernel arguments")
        args = text[paren + 1:end]
        line = text.count("\n", 0, open_pos) + 1
        label = f"{os.path.basename(path)}:{line} {callee}"
        out.append(text[done:start])
        out.append(f'::qkv_emu::launch("{label}", {config[0].strip()}, {config[1].strip()}, '
                   f"[](auto... qkv_emu_arg) {{ {callee}(qkv_emu_arg...); }}")
        # newlines between the kernel's name and its arguments (a launch the layout broke before
        # <<< or inside it) stay, ahead of the arguments, so every later line keeps its number
        out.append("\n" * text[start:paren].count("\n"))
        out.append(f",{args})" if args.strip() else ")")
        done = end + 1
    out.append(text[done:])
    return "".join(out)


def translate_shared(path, text):
    def repl(m):
        align, type_, name, extent = m.group(1), m.group(2), m.group(3), m.group(4)
        aligned = f"alignas({align}) " if align else ""
        return f"{aligned}static {type_} {name}{extent}; ::qkv_emu::shared_array({name});"

    text = SHARED.sub(repl, text)
    left = text.find("__shared__")
    if left >= 0:
        fail(path, text, left, "unsupported __shared__ declaration (only `__shared__ [__align__(A)] T name[N];`)")
    return text


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, encoding="utf-8") as f:
        text = f.read()
    lines = text.count("\n")
    text = translate_launches(src, text)
    text = translate_shared(src, text)
    text = re.sub(r"^[ \t]*#pragma unroll[^\n]*$", "", text, flags=re.M)
    assert text.count("\n") == lines, "the translation must keep every line where it was"
    os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
    with open(dst, "w", encoding="utf-8") as f:
        f.write(f'#line 1 "{src}"\n' + text)


if __name__ == "__main__":
    main()
