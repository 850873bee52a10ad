"""ortc's own code parses as Python 3.9 (a target, with PyPy 3.9), whatever runs the tests."""

from __future__ import annotations

import ast
import glob
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_module_parses_as_python_3_9() -> None:
    files = sorted(glob.glob(os.path.join(ROOT, "ortc", "**", "*.py"), recursive=True))
    assert len(files) > 20
    failures = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            source = f.read()
        try:
            ast.parse(source, path, feature_version=(3, 9))
        except SyntaxError as exc:
            failures.append(f"{os.path.relpath(path, ROOT)}:{exc.lineno}: {exc.msg}")
    assert not failures, failures


def test_the_check_refuses_newer_syntax() -> None:
    match_statement = "match x:\n    case 1:\n        pass\n"
    try:
        ast.parse(match_statement, feature_version=(3, 9))
    except SyntaxError:
        return
    raise AssertionError("a match statement parsed as Python 3.9")
