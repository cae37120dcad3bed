#!/usr/bin/python3
"""tests/function_length.py — fails when a C++ or Python function in framework, models, train, data,
tools or tests is longer than 80 lines.

A Python function (def, a method included) counts from its def line to its last line, as Python's
ast module gives them; a function nested in another counts toward that one too.

A function's length counts its lines from the first line of its signature to its closing brace,
comments and blank lines included. Lambdas and local classes count toward the function they sit in.
The scan is lexical, not a C++ parser: comments, string and character literals (raw strings too)
are blanked first, then braces are matched; a brace opens a function body when the text before it
(since the last ';', '{' or '}' of the enclosing scope) ends in ')', a trailing specifier (const,
override, final, noexcept, mutable) or a trailing return type. doctest's TEST_SUITE is a scope (its
TEST_CASEs are the functions), and a macro's body (a #define with its continuation lines) is skipped.

  python3 tests/function_length.py [--limit N] [--top K] [DIR_OR_FILE ...]

--top K lists the K longest functions (name, file:line, lines) whatever the limit; --self-test checks
the scan on small sources of its own (each case would fail a wrong scan).
"""

import argparse
import os
import re
import sys

DEFAULT_PATHS = ["framework", "models", "train", "data", "tools", "tests"]
SPECIFIERS = r"(?:\s*(?:const|override|final|noexcept|mutable))*"
FUNCTION_HEAD = re.compile(r"(\)" + SPECIFIERS + r"|\)" + SPECIFIERS + r"\s*->\s*[\w:<>,\s\*&]+)\s*$")
ACCESS = re.compile(r"\b(public|private|protected)\s*:(?!:)")


def blank_literals_and_comments(text):
    """The text with comments and the insides of literals replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(text)
    keep_newlines = lambda s: "".join(c if c == "\n" else " " for c in s)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(keep_newlines(text[i:end]))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(keep_newlines(text[i:end]))
            i = end
        elif c == "R" and i + 1 < n and text[i + 1] == '"' and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delimiter = text[i + 2:open_paren]
            end = text.find(")" + delimiter + '"', open_paren)
            end = n if end < 0 else end + len(delimiter) + 2
            out.append('R"' + keep_newlines(text[i + 2:end - 1]) + '"')
            i = end
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator (1'000)
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + keep_newlines(text[i + 1:j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def function_name(head):
    """The qualified name before the parameter list of a function head."""
    depth, cut = 0, None
    for k, ch in enumerate(head):  # the first '(' outside template brackets
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif ch == "(" and depth == 0:
            cut = k
            break
    before = head[:cut] if cut is not None else head
    match = re.search(r"([~\w:]+|operator\s*\S+)\s*$", before)
    return match.group(1) if match else before.strip()


def functions(path):
    """(name, first line, last line) of every function defined in a C++ file."""
    text = blank_literals_and_comments(open(path, encoding="utf-8").read())
    # preprocessor lines, with their continuation lines (a macro's body), take no part in the scopes
    lines, in_directive = [], False
    for line in text.split("\n"):
        directive = in_directive or line.lstrip().startswith("#")
        in_directive = directive and line.rstrip().endswith("\\")
        lines.append(" " * len(line) if directive else line)
    text = "\n".join(lines)
    found = []
    stack = []           # per open brace: (kind, first line, name)
    head, head_start = "", None
    line = 1
    for ch in text:
        if ch == "\n":
            line += 1
        in_function = any(kind == "function" for kind, _, _ in stack)
        if in_function:
            if ch == "{":
                stack.append(("inner", line, None))
            elif ch == "}":
                kind, first, name = stack.pop()
                if kind == "function":
                    found.append((name, first, line))
            continue
        if ch == "{":
            stripped = head.strip()
            if re.match(r"^(namespace\b|extern\b|TEST_SUITE\s*\()", stripped):  # doctest's suites are scopes
                stack.append(("scope", line, None))
            elif re.match(r"^(template\s*<.*>\s*)?(class|struct|union|enum)\b", stripped, re.S) and "(" not in stripped.split("{")[0].split(":")[0]:
                stack.append(("scope", line, None))
            elif FUNCTION_HEAD.search(stripped):
                stack.append(("function", head_start or line, function_name(stripped)))
            else:
                stack.append(("init", line, None))  # a braced initialiser: part of the head
                head += ch
                continue
            head, head_start = "", None
        elif ch == "}":
            kind = stack.pop()[0] if stack else "scope"
            if kind == "init":
                head += ch
                continue
            head, head_start = "", None
        elif ch == ";" and not (stack and stack[-1][0] == "init"):
            head, head_start = "", None
        else:
            head += ch
            if ch == ":" and ACCESS.search(head) and ACCESS.search(head).end() == len(head):
                head, head_start = "", None
            elif head_start is None and not ch.isspace():
                head_start = line
    return found


def python_functions(path):
    """(name, first line, last line) of each def in a Python file."""
    import ast
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    return [(node.name, node.lineno, node.end_lineno) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def source_files(paths):
    for p in paths:
        if os.path.isfile(p):
            yield p
            continue
        for root, _, names in os.walk(p):
            for name in sorted(names):
                if name.endswith((".cpp", ".h", ".cu", ".py")):
                    yield os.path.join(root, name)


def self_test():
    """The scan on sources whose answer is known; returns the number of wrong answers."""
    import tempfile
    body = "\n".join(f"  x += {i};" for i in range(85))
    cases = [  # (source, {name: lines} expected)
        ("int f(int x) {\n" + body + "\n  return x;\n}\n", {"f": 88}),
        # a suite is a scope: its cases are the functions, however long the suite
        ('TEST_SUITE("s") {\nTEST_CASE("a") {\n  CHECK(1);\n}\n' + "\n" * 90 + 'TEST_CASE("b") {\n  CHECK(2);\n}\n}\n',
         {"TEST_CASE": 3}),
        # a macro's braces, over continuation lines, are no function
        ("#define M(x) \\\n  do {       \\\n    f(x);    \\\n  } while (0)\nvoid g() {\n  M(1);\n}\n", {"g": 3}),
        # braces inside strings and comments do not count
        ('void h() {\n  const char* s = "{{{";  // }\n}\n', {"h": 3}),
    ]
    wrong = 0
    for source, expected in cases:
        with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
            f.write(source)
        got = {}
        for name, first, last in functions(f.name):
            got[name] = max(got.get(name, 0), last - first + 1)
        os.unlink(f.name)
        if got != expected:
            print(f"function_length self-test: expected {expected}, got {got} for:\n{source}", file=sys.stderr)
            wrong += 1
    print(f"function length self-test: {len(cases) - wrong} of {len(cases)} scans right")
    return wrong


def main():
    if "--self-test" in sys.argv[1:]:
        return 1 if self_test() else 0
    parser = argparse.ArgumentParser(description="fail when a function is longer than the limit")
    parser.add_argument("paths", nargs="*", default=DEFAULT_PATHS)
    parser.add_argument("--limit", type=int, default=80)
    parser.add_argument("--top", type=int, default=0)
    args = parser.parse_args()
    rows = []
    for path in source_files(args.paths):
        for name, first, last in (python_functions(path) if path.endswith(".py") else functions(path)):
            rows.append((last - first + 1, name, path, first))
    rows.sort(key=lambda r: (-r[0], r[2], r[3]))
    for length, name, path, first in rows[:args.top]:
        print(f"{length:5d}  {name}  {path}:{first}")
    too_long = [r for r in rows if r[0] > args.limit]
    for length, name, path, first in too_long:
        print(f"{path}:{first}: {name} is {length} lines long; the limit is {args.limit}", file=sys.stderr)
    if not rows:
        print(f"function_length: no functions found in {' '.join(args.paths)}", file=sys.stderr)
        return 1
    print(f"function length: {len(rows)} functions in {' '.join(args.paths)}, "
          f"{len(too_long)} longer than {args.limit} lines")
    return 1 if too_long else 0


if __name__ == "__main__":
    sys.exit(main())
