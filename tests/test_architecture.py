"""docs/ARCHITECTURE.md against the code: its layer table names every module, and its list of
arrows is the package's imports of same-or-higher layers, no more and no fewer.

The imports are tests/test_imports.py's graph, read from the source: at a module's top, inside
functions (the lazy ones), and by name (a string ``"ortc.x"`` in a module using
``importlib``); imports a type checker alone sees (under ``if TYPE_CHECKING:``) do not count. Inside the ``compat/`` and
``conformance/`` subpackages modules import each other freely.
"""

from __future__ import annotations

import functools
import os
import re

from test_imports import import_graph

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "ARCHITECTURE.md")
#: subpackages whose modules import each other without arrows
SUBPACKAGES = ("compat", "conformance")


@functools.lru_cache(maxsize=None)
def _graph() -> dict[str, set[str]]:
    return import_graph()


def _modules() -> list[str]:
    return sorted(_graph())


def _imports(module: str) -> set[str]:
    """The ortc modules ``module`` imports."""
    return _graph()[module]


def _doc_module(name: str) -> str:
    name = name.strip().strip("`")
    return "ortc" if name == "__init__" else "ortc." + name.replace("/", ".")


def _short(module: str) -> str:
    return "__init__" if module == "ortc" else module[len("ortc."):].replace(".", "/")


def _doc() -> str:
    with open(DOC, encoding="utf-8") as f:
        return f.read()


def _layers() -> list[set[str]]:
    """The layer table's modules, bottom up (``ortc/x.py`` and ``x`` both read as ``x``)."""
    table = _doc().split("## Layers", 1)[1].split("\n## ", 1)[0]
    layers = []
    for row in table.splitlines():
        if not row.startswith("| ") or row.startswith("| layer"):
            continue
        names = {n.replace("ortc/", "").replace(".py", "").rstrip("/")
                 for n in re.findall(r"`([^`]+)`", row.split("|")[2])}
        layers.append({n for n in names if not n.startswith("include") and n != "build_ffi"})
    return layers


def _layer(module: str, layers: list[set[str]]) -> int | None:
    name = _short(module)
    for i, names in enumerate(layers):
        if name in names or name.split("/")[0] in names:
            return i
    return None


def _arrows() -> set[tuple[str, str]]:
    """The list's arrows: ``a, b -> c -> d`` gives a->c, b->c, c->d; notes in parentheses."""
    block = _doc().split("## Arrows", 1)[1].split("```", 2)[1]
    block = re.sub(r"\([^)]*\)", "", block)
    arrows = set()
    for line in block.splitlines():
        if "->" not in line:
            assert not line.strip(), f"ARCHITECTURE.md, Arrows: not an arrow: {line!r}"
            continue
        sides = [[n.strip() for n in side.split(",") if n.strip()] for side in line.split("->")]
        for left, right in zip(sides, sides[1:]):
            arrows.update((_doc_module(a), _doc_module(b)) for a in left for b in right)
    return arrows


def test_every_module_is_in_a_layer() -> None:
    layers = _layers()
    assert len(layers) == 6, layers
    assert [m for m in _modules() if _layer(m, layers) is None] == []


def test_every_listed_arrow_is_an_import_the_code_makes() -> None:
    modules = set(_modules())
    wrong = []
    for a, b in sorted(_arrows()):
        if a not in modules or b not in modules:
            wrong.append(f"{_short(a)} -> {_short(b)}: no such module")
        elif b not in _imports(a):
            wrong.append(f"{_short(a)} -> {_short(b)}: {a} does not import {b}")
    assert wrong == []


def test_every_import_of_the_same_or_a_higher_layer_is_listed() -> None:
    layers = _layers()
    arrows = _arrows()
    modules = set(_modules())
    unlisted = []
    for a in sorted(modules):
        sub = a.split(".")[1] if "." in a else ""
        for b in sorted(_imports(a) & modules):
            if sub in SUBPACKAGES and b.startswith(f"ortc.{sub}"):
                continue
            la, lb = _layer(a, layers), _layer(b, layers)
            assert la is not None and lb is not None
            if lb >= la and (a, b) not in arrows:
                unlisted.append(f"{_short(a)} -> {_short(b)}")
    assert unlisted == []


def test_the_reading_of_imports_finds_each_kind() -> None:
    """The scan itself: a lazy import (inside a function), a by-name one, and one a type checker
    alone sees, in modules where each is known to be."""
    assert "ortc._callbacks" in _imports("ortc._run")  # inside RunEngine.start_async
    assert "ortc.conformance.cli" in _imports("ortc.__main__")  # a string for importlib
    assert "ortc.value" not in _imports("ortc.session")  # under TYPE_CHECKING only
    assert "ortc.value" in _imports("ortc._run")  # at the top
