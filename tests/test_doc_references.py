"""What the prose cites exists: every conformance check id and every test named in README.md,
docs/*.md and the Rust crate's README and comments, and in the strings of the rules table's
sources (ortc/rules_table.py, ortc/slot_rules.py, ortc/evidence.py) and the rules they render,
is a check the kit registers or a test in tests/; every link between these pages reaches a file,
and every #anchor a heading (or an explicit anchor) of the page it names.

tests/test_evidence.py checks the evidence records' structured references; this file checks
the free text around them, where a renamed test or check went stale unnoticed (docs cited
tests that the run core's rewrite had removed).
"""

from __future__ import annotations

import glob
import io
import json
import os
import re
import tokenize

import pytest

import ortc
from conftest import ROOT
from ortc.conformance.checks import all_checks

CHECKS = frozenset(c.id for c in all_checks())
FAMILIES = sorted({i.split(".")[0] for i in CHECKS}, key=len, reverse=True)
#: a check id: a family of the kit, a dot, then the rest; a prefix (`thread.`, `api31.*`)
#: stands for the checks it selects. Not a file name (`session.py`), a call
#: (`session.thread_rules()`), a quoted config key ("session.k") or ORT's own config keys
#: (their words are joined by '_', never by '-' as check ids' are).
CHECK_ID = re.compile(r"(?<![\w./\"'-])(" + "|".join(FAMILIES) + r")\.([a-z0-9][a-z0-9_.*-]*)")
FILE_NAME = re.compile(r"\.(py|rs|md|h|json|toml|so|onnx|txt|c|cc|sh|yml|yaml|lock|npy)$")
TEST_PATH = re.compile(r"(tests/[\w/]+\.py)(?:::(\w+)(?:::(\w+))?)?")
BARE_TEST = re.compile(r"(?<![\w/.])(?:::)?(test_\w+)")
LINK = re.compile(r"\]\(([^)\s]+)\)")

PAGES = ["README.md", *sorted(os.path.relpath(p, ROOT) for p in glob.glob(
    os.path.join(ROOT, "docs", "*.md"))), os.path.join("rust", "ortc-rules", "README.md")]
RULE_SOURCES = [os.path.join("ortc", n) for n in ("rules_table.py", "slot_rules.py",
                                                  "evidence.py")]


def _read(rel: str) -> str:
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def _strings(source: str) -> str:
    """The string literals of a Python source, one a line (names in the code are not prose)."""
    kinds = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    return "\n".join(t.string for t in tokenize.generate_tokens(io.StringIO(source).readline)
                     if t.type in kinds)


def _rust_comments(source: str) -> str:
    """The comments of a Rust source (its docs and notes; the code's names are not prose)."""
    return "\n".join(line.strip().lstrip("/!") for line in source.splitlines()
                     if line.strip().startswith("//"))


def _test_defs() -> set[str]:
    names: set[str] = set()
    for path in glob.glob(os.path.join(ROOT, "tests", "**", "*.py"), recursive=True):
        with open(path, encoding="utf-8") as f:
            names.update(re.findall(r"^\s*(?:async )?def (test_\w+)\(", f.read(), re.M))
    return names


def citation_problems(where: str, text: str, defs: set[str] | None = None) -> list[str]:
    """Check ids and tests ``text`` cites that do not exist."""
    bad = []
    for m in CHECK_ID.finditer(text):
        ident = m.group(0).rstrip(".-")
        if FILE_NAME.search(ident) or "_" in ident or text[m.end():m.end() + 1] == "(":
            continue
        if ident.endswith("*") or m.group(0).endswith("."):
            if not any(c.startswith(ident.rstrip("*")) for c in CHECKS):
                bad.append(f"{where}: the prefix {ident!r} selects no conformance check")
        elif ident not in CHECKS:
            bad.append(f"{where}: no conformance check {ident!r}")
    for m in TEST_PATH.finditer(text):
        path, func, method = m.groups()
        full = os.path.join(ROOT, path)
        if not os.path.isfile(full):
            bad.append(f"{where}: no test file {path}")
            continue
        body = _read(path)
        if func and not re.search(rf"^(def|class) {func}\b", body, re.M):
            bad.append(f"{where}: no {func} in {path}")
        elif method and not re.search(rf"^\s+def {method}\(", body, re.M):
            bad.append(f"{where}: no method {method} in {path}::{func}")
    defs = _test_defs() if defs is None else defs
    for m in BARE_TEST.finditer(text):
        name = m.group(1)
        after = text[m.end():m.end() + 3]
        if name.endswith("_") or after == ".py" or re.search(r"tests/[\w/]*(\.py::)?$",
                                                             text[:m.start()][-200:]):
            continue  # a prefix (test_compat_*), a file name, or a path checked above
        if name not in defs:
            bad.append(f"{where}: no test named {name!r} in tests/")
    return bad


def slug(heading: str) -> str:
    """The anchor GitHub makes of a heading: lower case, punctuation dropped, spaces as '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", re.sub(r"<[^>]+>", "", heading.lower()))
    return "".join("-" if ch == " " else ch for ch in text.strip()
                   if ch in " -_" or ch.isalnum())


def anchors(markdown: str) -> set[str]:
    found: set[str] = set(re.findall(r'<a\s+(?:id|name)="([^"]+)"', markdown))
    seen: dict[str, int] = {}
    fenced = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            found.add(base if n == 0 else f"{base}-{n}")  # GitHub numbers repeated headings
            seen[base] = n + 1
    return found


def link_problems(page: str, text: str) -> list[str]:
    """Links of ``page`` (a path under ROOT) to files or anchors that do not exist."""
    bad = []
    base = os.path.dirname(os.path.join(ROOT, page))
    for m in LINK.finditer(re.sub(r"```.*?```", "", text, flags=re.S)):
        target = m.group(1)
        if re.match(r"^[a-z]+:", target):
            continue  # a URL
        path, _, fragment = target.partition("#")
        full = os.path.normpath(os.path.join(base, path)) if path else os.path.join(ROOT, page)
        if not os.path.exists(full):
            bad.append(f"{page}: link {target!r}: no {os.path.relpath(full, ROOT)}")
        elif fragment and full.endswith(".md"):
            with open(full, encoding="utf-8") as f:
                if fragment not in anchors(f.read()):
                    bad.append(f"{page}: link {target!r}: no heading #{fragment}")
    return bad


def test_every_cited_check_and_test_exists() -> None:
    defs = _test_defs()
    bad: list[str] = []
    for page in PAGES:
        bad += citation_problems(page, _read(page), defs)
    for source in RULE_SOURCES:
        bad += citation_problems(source, _strings(_read(source)), defs)
    bad += citation_problems("ortc.rules()", json.dumps(ortc.rules()), defs)
    crate = os.path.join(ROOT, "rust", "ortc-rules")
    for path in sorted(glob.glob(os.path.join(crate, "**", "*.rs"), recursive=True)):
        rel = os.path.relpath(path, ROOT)
        if os.sep + "target" + os.sep not in rel:
            bad += citation_problems(rel, _rust_comments(_read(rel)), defs)
    assert bad == []
    # the scan sees what it is for (a change to the patterns that matched nothing would pass)
    found = CHECK_ID.findall(_read(os.path.join("docs", "THREAD_RULES.md")))
    assert len(found) > 300
    assert "tests/test_threads.py::" in _read(os.path.join("docs", "THREAD_RULES.md"))


def test_every_test_the_code_cites_exists() -> None:
    """The package's and the bench's comments and docstrings cite tests by path (why a step is
    there, what holds it): each file and function named exists (a comment of the run engine
    named a test file the run core's rewrite had deleted)."""
    bad: list[str] = []
    sources = [*glob.glob(os.path.join(ROOT, "ortc", "**", "*.py"), recursive=True),
               *glob.glob(os.path.join(ROOT, "bench", "*.py"))]
    cited = 0
    for path in sorted(sources):
        rel = os.path.relpath(path, ROOT)
        text = _read(rel)
        cited += len(TEST_PATH.findall(text))
        bad += [p for p in citation_problems(rel, text, set()) if "no test named" not in p
                and "conformance check" not in p and "selects no" not in p]
    assert bad == []
    assert cited > 20  # (the scan sees the citations it is for)


def test_every_link_between_the_pages_resolves() -> None:
    bad: list[str] = []
    for page in PAGES:
        bad += link_problems(page, _read(page))
    assert bad == []


@pytest.mark.parametrize(("text", "found"), [
    ("checked by `thread.no-such-check`", "no conformance check 'thread.no-such-check'"),
    ("every `zz9.` check", None),  # not a family of the kit: not a citation
    ("run `--only api31.gone*`", "the prefix 'api31.gone*' selects no conformance check"),
    ("see tests/test_nowhere.py", "no test file tests/test_nowhere.py"),
    ("see `tests/test_threads.py::test_that_was_renamed`", "no test_that_was_renamed in "
                                                           "tests/test_threads.py"),
    ("(`test_a_test_that_was_removed`)", "no test named 'test_a_test_that_was_removed'"),
    ("`sess.run()` and `session.thread_rules()`, session.py, \"session.k\"", None),
    ("`thread.shared-binding`, `api31.*`, `--only thread.`, tests/test_rules.py", None),
])
def test_a_stale_citation_is_reported(text: str, found: str | None) -> None:
    bad = citation_problems("page", text)
    assert (bad == []) if found is None else (len(bad) == 1 and found in bad[0]), bad


@pytest.mark.parametrize(("link", "found"), [
    ("[x](docs/NOWHERE.md)", "no docs/NOWHERE.md"),
    ("[x](docs/THREAD_RULES.md#no-such-heading)", "no heading #no-such-heading"),
    ("[x](#nor-here)", "no heading #nor-here"),
    ("[x](docs/THREAD_RULES.md#answers-first) [y](#use) [z](https://example.org/#x)", None),
    ("[x](docs/CONFORMANCE.md#threadshared-binding)", None),
])
def test_a_broken_link_is_reported(link: str, found: str | None) -> None:
    bad = link_problems("README.md", link)
    assert (bad == []) if found is None else (len(bad) == 1 and found in bad[0]), bad
