"""What the prose cites exists: every conformance check id and every test named in README.md,
docs/*.md and the Rust crate's README and comments, and in the strings of the rules table's
sources (ortc/rules_table.py, ortc/slot_rules.py, ortc/evidence.py) and the rules they render,
is a check the kit registers or a test in tests/; every link between these pages reaches a file,
and every #anchor a heading (or an explicit anchor) of the page it names; and every piece of
code the pages name where they describe the code as it is now (a class and its member, a module
and its function, a file) exists (the rule, and which parts of which pages it covers:
test_the_code_the_pages_name_exists's docstring).

tests/test_evidence.py checks the evidence records' structured references; this file checks
the free text around them, where a renamed test or check went stale unnoticed (docs cited
tests that the run core's rewrite had removed).
"""

from __future__ import annotations

import ast
import glob
import importlib
import importlib.util
import io
import json
import os
import re
import tokenize
from functools import lru_cache

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


# -- the code the pages name -------------------------------------------------------------------
# (the rule: test_the_code_the_pages_name_exists's docstring)

PERFORMANCE_CURRENT = ("Reproduce", "The rows", "Targets", "How it measures")
#: pages whose code names are not ortc's: only their paths are checked
NAMES_NOT_ORTCS = {os.path.join("docs", n) for n in ("COMPAT.md", "CONFORMANCE.md",
                                                     "THREAD_RULES.md")}
GONE = re.compile(r"no\s+longer\s+exists?|(?:went|gone)\s+with\s+the\s+run\s+core's\s+rewrite",
                  re.I)
#: names of other projects the current pages cite that no file of this project spells:
#: CPython's frame attribute and C's thread exit (RELIABILITY's crash reports), an ONNX
#: attribute and an ORT node attribute (models RELIABILITY describes)
OUTSIDE = frozenset({"f_back", "pthread_exit", "ngram_indexes", "embed_mode"})
PATH_SPAN = re.compile(r"(?:ortc|bench|examples|include|rust)/[\w./-]*")
#: a file named without its folder (`_guard.py`, `rules.rs`)
FILE_SPAN = re.compile(r"[\w-]+\.(?:py|rs|h|c|md|toml)")
NAME_SPAN = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
CODE_WORD = re.compile(r"_+[A-Za-z]\w*|[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][a-z0-9]+[A-Z]\w*"
                       r"|[A-Z][a-z]+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
#: the name ortc gives an instance of these classes wherever it holds one
INSTANCE_NAMES = {"guard": "Guard"}


class _CodeIndex:
    """ortc's classes (members, bases), modules (top-level names) and the project's words."""

    def __init__(self) -> None:
        self.members: dict[str, set[str]] = {}
        self.bases: dict[str, set[str]] = {}
        self.modules: dict[str, set[str]] = {}  # short name -> top-level names (merged)
        self.words: set[str] = set()
        self.files: set[str] = set()
        for folder, dirs, names in os.walk(ROOT):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d != "target"]
            self.files.update(names)
        for path in sorted(glob.glob(os.path.join(ROOT, "ortc", "**", "*.py"), recursive=True)):
            rel = os.path.relpath(path, ROOT)
            self._index_ortc(ast.parse(_read(rel)), os.path.basename(path)[:-3])
        for pattern in ("tests/**/*.py", "bench/*.py", "examples/*.py"):
            for path in glob.glob(os.path.join(ROOT, pattern), recursive=True):
                self._words(ast.parse(_read(os.path.relpath(path, ROOT))))
        for pattern in ("rust/ortc-rules/src/*.rs", "rust/ortc-rules/tests/**/*.rs",
                        "include/*.h"):
            for path in glob.glob(os.path.join(ROOT, pattern), recursive=True):
                code = re.sub(r"//[^\n]*|/\*.*?\*/", "", _read(os.path.relpath(path, ROOT)),
                              flags=re.S)
                self.words.update(re.findall(r"[A-Za-z_]\w*", code))

    def _words(self, tree: ast.AST) -> None:
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.words.add(n.name)
            elif isinstance(n, ast.Name):
                self.words.add(n.id)
            elif isinstance(n, ast.Attribute):
                self.words.add(n.attr)
            elif isinstance(n, ast.arg):
                self.words.add(n.arg)
            elif isinstance(n, ast.keyword) and n.arg:
                self.words.add(n.arg)
            elif isinstance(n, ast.alias):
                self.words.update((n.asname or n.name).split("."))
            elif isinstance(n, ast.Constant) and isinstance(n.value, str) and \
                    re.fullmatch(r"\w+", n.value):
                self.words.add(n.value)

    def _index_ortc(self, tree: ast.Module, module: str) -> None:
        self._words(tree)
        self.words.add(module)
        top = self.modules.setdefault(module, set())
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                top.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                top.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                top.update((a.asname or a.name).split(".")[0] for a in node.names)
        for cls in ast.walk(tree):
            if not isinstance(cls, ast.ClassDef):
                continue
            members = self.members.setdefault(cls.name, set())
            self.bases.setdefault(cls.name, set()).update(
                b.id if isinstance(b, ast.Name) else b.attr for b in cls.bases
                if isinstance(b, (ast.Name, ast.Attribute)))
            for n in ast.walk(cls):
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    members.add(n.name)
                elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    members.add(n.id)
                elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and \
                        isinstance(n.value, ast.Name) and n.value.id in ("self", "cls"):
                    members.add(n.attr)
                elif isinstance(n, ast.Constant) and isinstance(n.value, str):
                    members.add(n.value)  # __slots__, names set through setattr or a table

    def class_members(self, name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        found = set(self.members.get(name, ())) | set(dir(object))
        for base in self.bases.get(name, ()):
            if base not in seen:
                found |= self.class_members(base, seen | {name})
        return found

    def known_word(self, word: str) -> bool:
        if word in self.words or word in OUTSIDE:
            return True
        try:
            return importlib.util.find_spec(word) is not None
        except (ImportError, ValueError):
            return False


@lru_cache(maxsize=1)
def _code_index() -> _CodeIndex:
    return _CodeIndex()


def _ortc_name_problem(dotted: str) -> str | None:
    """Why ``ortc.a.b...`` names nothing, or None."""
    parts = dotted.split(".")
    module, i = "ortc", 1
    while i < len(parts):  # the longest prefix that is a module or a package
        path = os.path.join(ROOT, *module.split("."), parts[i])
        if not (os.path.isfile(path + ".py") or os.path.isdir(path)):
            break
        module, i = f"{module}.{parts[i]}", i + 1
    if i == len(parts):
        return None
    try:
        obj = getattr(importlib.import_module(module), parts[i])
    except AttributeError:
        return f"{module} has no {parts[i]!r}"
    if i + 1 < len(parts) and isinstance(obj, type) and not hasattr(obj, parts[i + 1]) and \
            parts[i + 1] not in _code_index().class_members(obj.__name__):
        return f"{module}.{parts[i]} has no member {parts[i + 1]!r}"
    return None


def name_problem(span: str) -> str | None:
    """Why the backtick span ``span`` names code that does not exist, or None (the rule:
    test_the_code_the_pages_name_exists)."""
    span = span.strip()
    if span.endswith(")") and "(" in span:
        span = span[:span.index("(")]  # a call: the name called
    if PATH_SPAN.fullmatch(span):
        return None if os.path.exists(os.path.join(ROOT, span.rstrip("/"))) else \
            f"no file or folder {span}"
    index = _code_index()
    if FILE_SPAN.fullmatch(span):
        return None if span in index.files else f"no file {span} in the repository"
    if not NAME_SPAN.fullmatch(span) or span.startswith("__") and span.endswith("__"):
        return None
    head, _, rest = span.partition(".")
    member = rest.split(".")[0]
    if head == "ortc" and rest:
        return _ortc_name_problem(span)
    if rest and head in index.members:
        return None if member in index.class_members(head) else \
            f"no {member!r} in class {head}"
    if rest and head.startswith("_") and head in index.modules:
        return None if member in index.modules[head] else f"no {member!r} in ortc's {head}"
    if rest and head in INSTANCE_NAMES:
        cls = INSTANCE_NAMES[head]
        return None if member in index.class_members(cls) else f"no {member!r} in class {cls}"
    if CODE_WORD.fullmatch(head) and head not in index.members and \
            (not rest or head[0].isupper() or head[0] == "_") and not index.known_word(head):
        return f"no {head!r} anywhere in the project's code"
    return None


def _blocks(markdown: str) -> list[tuple[int, str]]:
    """(first line number, text) of each paragraph, list item and table row; fenced code
    blocks are left out (their names are a program's, checked by running it)."""
    found: list[tuple[int, list[str]]] = []
    fenced = False
    open_block = False
    for n, line in enumerate(markdown.splitlines(), 1):
        if line.startswith("```"):
            fenced, open_block = not fenced, False
            continue
        if fenced or not line.strip() or line.startswith("    ") and not open_block:
            open_block = False
            continue
        starts = line.startswith("|") or line.startswith("#") or \
            re.match(r"\s*(?:[*-]|\d+\.)\s", line) is not None
        if starts or not open_block:
            found.append((n, [line]))
        else:
            found[-1][1].append(line)
        open_block = not line.startswith("|") and not line.startswith("#")
    return [(n, "\n".join(lines)) for n, lines in found]


def current_text(page: str, markdown: str) -> str:
    """The parts of ``page`` that describe the code as it is now (the rule:
    test_the_code_the_pages_name_exists)."""
    if page != os.path.join("docs", "PERFORMANCE.md"):
        return markdown
    kept: list[str] = []
    keep = True
    for line in markdown.splitlines():
        m = re.match(r"## (.*)", line)
        if m:
            keep = m.group(1).strip() in PERFORMANCE_CURRENT
        kept.append(line if keep else "")
    return "\n".join(kept)


def code_name_problems(page: str, markdown: str) -> list[str]:
    """The code ``page`` names in its current parts that does not exist (the rule:
    test_the_code_the_pages_name_exists)."""
    bad = []
    text = current_text(page, markdown)
    for line, block in _blocks(text):
        if GONE.search(block):
            continue  # a record of code that is gone
        for m in re.finditer(r"`([^`\n]+)`", block):
            span = m.group(1)
            problem = name_problem(span) if page not in NAMES_NOT_ORTCS or \
                PATH_SPAN.fullmatch(span.strip()) else None
            if problem:
                bad.append(f"{page}:{line}: `{span}`: {problem}")
    return bad


def test_the_code_the_pages_name_exists() -> None:
    """A page that says how the code works names it: `Guard.enter`, `RunContext.close`,
    `_status.ignore`, `ortc/_run.py`, `release_begins`. After the run core's rewrite several pages
    went on describing, as current, code it had deleted (`release_run`, `Guard.call_shared_alone`,
    `guard.users`), which no citation check saw. The rule:

    * Current: README.md, the Rust crate's README and every page under docs/ describe the code as
      it is now, but for
      - docs/PERFORMANCE.md, of which only the introduction and the sections PERFORMANCE_CURRENT
        name are: its other sections are dated records of past runs and name the code of then;
      - docs/COMPAT.md, whose code names are onnxruntime's API (what ortc.compat provides, and
        what it does not), held to onnxruntime itself by tests/test_compat*.py;
      - docs/CONFORMANCE.md and docs/THREAD_RULES.md, generated from ortc's own sources (the check
        registry; the rules table, whose strings test_every_cited_check_and_test_exists reads),
        and naming ORT's C and C++ code rather than ortc's.
      Those pages' paths into the repository (`ortc/_guard.py`) are checked all the same.
    * A record inside a current page: a block (a paragraph, a list item, a table row) that says
      the code it names is gone (GONE: "... no longer exists", "... went with the run core's
      rewrite") is history and may name that code.
    * What is checked, per backtick span that is one name (a call's arguments dropped):
      - a path under ortc/, bench/, examples/, include/ or rust/ exists, and so does a file
        named without its folder somewhere in the repository;
      - `ortc.mod.name` imports; `Class.member` (Class one of ortc's classes) is a member of it or
        of a base; `_module.name` (one of ortc's private modules) is a name of that module, and
        `guard.member` a member of Guard (the name ortc gives a guard everywhere);
      - a bare name that looks like code (a leading underscore, snake_case, CamelCase,
        UPPER_CASE), and the head of a dotted name that is not one of the above, occurs in the
        project's own code (ortc/, tests/, bench/, examples/, the Rust crate, include/) as a
        name or a one-word string, or is an importable module. OUTSIDE lists the few names of
        other projects the current pages cite.
      Other dotted names (`np.ndarray`, `os.fork`, `session.intra_op.allow_spinning`, check ids)
      are other projects' or ORT's, and are not checked.
    """
    bad: list[str] = []
    checked = 0
    for page in PAGES:
        text = _read(page)
        bad += code_name_problems(page, text)
        checked += len(re.findall(r"`[^`\n]+`", current_text(page, text)))
    assert bad == []
    assert checked > 1000  # (the scan sees the pages it is for)


@pytest.mark.parametrize(("text", "found"), [
    # names the run core's rewrite deleted, as the pages named them after it
    ("a `finally` leaves with one C call (`guard.users.remove(token)`)",
     "no 'users' in class Guard"),
    ("cleanups (`release_run`, the binding's `_release_outputs`) are made of steps",
     "no 'release_run' anywhere"),
    ("the stages of `ortc._stage`", "ortc has no '_stage'"),
    ("the bound run's entries (`Guard.call_shared_alone`)", "no 'call_shared_alone' in class"),
    ("its leases (`Lease(obj, into=keep)`)", "no 'Lease' anywhere"),
    ("see `_plan.one_element`", "no '_plan' anywhere"),
    ("see `Session._stoppable`", "no '_stoppable' in class Session"),
    ("the pipeline of `ortc/_stage.py`", "no file or folder ortc/_stage.py"),
    ("`ortc._run.RunContext.reopen`", "ortc._run.RunContext has no member 'reopen'"),
    ("`_run.release_run`", "no 'release_run' in ortc's _run"),
    # names that exist, and names of other projects
    ("`Guard.enter`, `RunContext.close`, `ortc/_run.py`, `_status.ignore`, `guard.calls`", None),
    ("`ortc._guard.Guard.leave`, `Entries.leave_quietly`, `release_begins`, `Hold`", None),
    ("`np.ndarray`, `os.fork`, `session.intra_op.allow_spinning`, `thread.shared-binding`",
     None),
    ("`sys._current_frames()`, `frame.clear()`, `list.remove`, `_thread`, `ml_dtypes`", None),
    ("`Future.cancel`, `test_a_marked_argument_is_held_for_the_call`, `f_back`", None),
    # a record says the code is gone
    ("| lanes | a lane held (`Lease`) | lanes went with the run core's rewrite |", None),
])
def test_a_name_of_code_that_is_gone_is_reported(text: str, found: str | None) -> None:
    bad = code_name_problems("README.md", text)
    assert (bad == []) if found is None else (len(bad) == 1 and found in bad[0]), bad


def test_only_the_current_sections_of_performance_md_are_held_to_the_code() -> None:
    page = os.path.join("docs", "PERFORMANCE.md")
    text = "## Reproduce\n\n`release_run`\n\n## A run (2026-01-01)\n\n`release_run`\n"
    assert len(code_name_problems(page, text)) == 1
    for name in PERFORMANCE_CURRENT:
        assert f"## {name}\n" in _read(page)
