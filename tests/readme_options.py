#!/usr/bin/python3
"""tests/readme_options.py — fails when train/README.md's option list of a command disagrees with
that command's `--help`.

For every command `qkv --help` lists, train/README.md must have a paragraph that starts "Options of
`qkv COMMAND`". Every flag the command's `--help` shows must be in it, every flag listed there must
exist, and a bracketed default must be the one --help prints ("off" for a flag without a value;
numbers compare as numbers, so 5e-3 matches 0.005). A flag whose --help shows a default must have
one in the list; a flag whose --help shows none (a required or optional value) may go without.
Hidden testing options are not in --help and need no entry.

  QKV=build/qkv python3 tests/readme_options.py [train/README.md]
"""

import os
import re
import subprocess
import sys

HELP_ONLY = {"--help", "--help-all", "--version"}


def readme_options(text, command):
    """{flag: default text or None} from the paragraph "Options of `qkv COMMAND`", or None."""
    start = text.find(f"Options of `qkv {command}`")
    if start < 0:
        return None
    end = text.find("\n\n", start)
    paragraph = text[start:end if end > 0 else len(text)]
    options = {}
    for match in re.finditer(r"`(--[a-z0-9-]+)[^`]*`(\s*\[([^\]:;]*))?", paragraph):
        flag, default = match.group(1), match.group(3)
        if flag not in options or options[flag] is None:
            options[flag] = default.strip() if default is not None else None
    return options


def run_help(qkv, *args):
    return subprocess.run([qkv, *args, "--help"], capture_output=True, text=True, check=True).stdout


def commands(qkv):
    """The subcommands `qkv --help` lists."""
    out = run_help(qkv)
    listed = out.split("Subcommands:", 1)[1] if "Subcommands:" in out else ""
    return [m.group(1) for m in re.finditer(r"^\s{2}([a-z]+)\s", listed, re.M)]


def help_options(qkv, command):
    """{flag: (default text or None, takes a value)} from `qkv COMMAND --help`, whose lines read
    `--flag TYPE  description [default]` (the description on the next line when the left column is
    too wide); a flag without TYPE takes no value and defaults to off."""
    out = run_help(qkv, command)
    options, flag = {}, None
    for line in out.splitlines():
        match = re.match(r"^\s{2}(--[a-z0-9-]+)((?:,--[a-z0-9-]+)*)(.*)$", line)
        if match:
            flag = match.group(1)
            rest = match.group(3)
            takes_value = bool(re.match(r"^\s?[A-Z{]", rest))
            options[flag] = (None if takes_value else "off", takes_value)
            text = rest
        elif flag and line.startswith(" " * 6) and line.strip():
            text = line  # the description of the flag above
        else:
            flag = None
            continue
        default = re.search(r"\[(\[?[^\]]*\]?)\]\s*$", text)
        if default:
            options[flag] = (default.group(1), options[flag][1])
    for flag in HELP_ONLY:
        options.pop(flag, None)
    return options


def same_default(readme, shown):
    """The README's default (up to ", " or its end) against --help's ("[a,b]" for a list)."""
    readme = re.split(r",\s", readme)[0].strip()
    if readme == shown or f"[{readme}]" == shown:
        return True
    try:
        return float(readme) == float(shown)
    except ValueError:
        return False


def check_command(text, path, qkv, command):
    listed, shown = readme_options(text, command), help_options(qkv, command)
    if listed is None:
        return [f"{path} has no paragraph starting 'Options of `qkv {command}`'"], len(shown)
    problems = []
    for flag, (default, _) in shown.items():
        if flag not in listed:
            problems.append(f"{flag} is in `qkv {command} --help` (default {default}) but not in {path}'s list")
        elif default is not None and listed[flag] is None:
            problems.append(f"qkv {command} {flag} is in {path}'s list without a [default]; --help says {default}")
        elif listed[flag] is not None and default is None:
            problems.append(f"qkv {command} {flag}: {path} says [{listed[flag]}], --help shows no default")
        elif listed[flag] is not None and not same_default(listed[flag], default):
            problems.append(f"qkv {command} {flag}: {path} says [{listed[flag]}], --help says {default}")
    for flag in listed:
        if flag not in shown:
            problems.append(f"qkv {command} {flag} is in {path}'s list but --help does not show it")
    return problems, len(shown)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "train/README.md"
    qkv = os.environ.get("QKV", "build/qkv")
    text = open(path, encoding="utf-8").read()
    problems, flags, names = [], 0, commands(qkv)
    if not names:
        problems.append("`qkv --help` lists no commands")
    for command in names:
        p, n = check_command(text, path, qkv, command)
        problems += p
        flags += n
    for p in problems:
        print(f"readme options: {p}", file=sys.stderr)
    print(f"readme options: {flags} flags of {len(names)} commands' --help, {len(problems)} disagreements with {path}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
