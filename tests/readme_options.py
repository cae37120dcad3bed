#!/usr/bin/python3
"""tests/readme_options.py — fails when README.md's `qkv train` option list disagrees with `qkv train --help`.

Every flag `qkv train --help` shows must be in the README's list (the paragraph under
"### `qkv train`" that starts "Options (defaults in brackets"), every flag listed there must exist,
and each bracketed default must be the one --help prints ("off" for a flag without a value; numbers
compare as numbers, so 5e-3 matches 0.005). Hidden testing options are not in --help and need no
entry.

  QKV=build/qkv python3 tests/readme_options.py [README.md]
"""

import os
import re
import subprocess
import sys

HELP_ONLY = {"--help", "--help-all"}


def readme_options(path):
    """{flag: default text or None} from the README's option paragraph."""
    text = open(path, encoding="utf-8").read()
    start = text.find("Options (defaults in brackets")
    if start < 0:
        raise SystemExit(f"{path}: no paragraph starting 'Options (defaults in brackets' (under ### `qkv train`)")
    end = text.find("\n\n", start)
    paragraph = text[start:end if end > 0 else len(text)]
    options = {}
    for match in re.finditer(r"`(--[a-z0-9-]+)[^`]*`(\s*\[([^\]:;,]*))?", paragraph):
        flag, default = match.group(1), match.group(3)
        if flag not in options or options[flag] is None:
            options[flag] = default.strip() if default is not None else None
    return options


def help_options(qkv):
    """{flag: default text, or 'off' for a flag without a value} from `qkv train --help`, whose lines
    read `--flag TYPE  description [default]` (the description on the next line when the left
    column is too wide)."""
    out = subprocess.run([qkv, "train", "--help"], capture_output=True, text=True, check=True).stdout
    options, flag = {}, None
    for line in out.splitlines():
        match = re.match(r"^\s{2}(--[a-z0-9-]+)(.*)$", line)
        if match:
            flag = match.group(1)
            options[flag] = "off"
            text = match.group(2)
        elif flag and line.startswith(" " * 6) and line.strip():
            text = line  # the description of the flag above
        else:
            flag = None
            continue
        default = re.search(r"\[([^\]]*)\]\s*$", text)
        if default:
            options[flag] = default.group(1)
    for flag in HELP_ONLY:
        options.pop(flag, None)
    return options


def same_default(readme, shown):
    if readme == shown:
        return True
    try:
        return float(readme) == float(shown)
    except ValueError:
        return False


def main():
    readme = sys.argv[1] if len(sys.argv) > 1 else "README.md"
    qkv = os.environ.get("QKV", "build/qkv")
    listed, shown = readme_options(readme), help_options(qkv)
    problems = []
    for flag, default in shown.items():
        if flag not in listed:
            problems.append(f"{flag} is in `qkv train --help` (default {default}) but not in {readme}'s option list")
        elif listed[flag] is None:
            problems.append(f"{flag} is in {readme}'s option list without a [default]; --help says {default}")
        elif not same_default(listed[flag], default):
            problems.append(f"{flag}: {readme} says [{listed[flag]}], `qkv train --help` says {default}")
    for flag in listed:
        if flag not in shown:
            problems.append(f"{flag} is in {readme}'s option list but `qkv train --help` does not show it")
    for p in problems:
        print(f"readme options: {p}", file=sys.stderr)
    print(f"readme options: {len(shown)} flags of qkv train --help, {len(problems)} disagreements with {readme}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
