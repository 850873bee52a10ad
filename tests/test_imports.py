"""The package's imports run one way: no module of ortc/ imports, directly or through others, a
module that imports it back. Imports made inside functions count too (they still couple the
modules), and so do the modules a module using ``importlib`` names in strings (``__main__``'s
commands);
annotations-only imports under ``if TYPE_CHECKING:`` do not (they never run).
tests/test_architecture.py reads the same graph against docs/ARCHITECTURE.md."""

from __future__ import annotations

import ast
import os
from typing import Iterator

from conftest import run_python

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ortc")


def _module_name(path: str) -> str:
    rel = os.path.relpath(path, os.path.dirname(ROOT))[:-3].replace(os.sep, ".")
    return rel[:-len(".__init__")] if rel.endswith(".__init__") else rel


def _runtime_imports(tree: ast.AST) -> Iterator[ast.ImportFrom | ast.Import]:
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
            if isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not):
                node.orelse = []  # ``if not TYPE_CHECKING:``: its body is what runs
            else:
                node.body = []  # annotations only: never imported at run time
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node


def import_graph() -> dict[str, set[str]]:
    modules = {}
    for folder, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(folder, f)
                modules[_module_name(path)] = path
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        by_name = False  # whether the module imports modules by name (importlib)
        for node in _runtime_imports(tree):
            by_name = by_name or "importlib" in (
                [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module])
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                mod = node.module or ""
                if node.level:
                    mod = f"{base}.{mod}" if mod else base
                # `from . import x` imports the module ortc.x; `from .x import y` the module x
                targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in modules else mod
                           for a in node.names]
            for t in targets:
                if t in modules and t != name:
                    graph[name].add(t)
        for node in ast.walk(tree) if by_name else ():  # a module it names for importlib
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and node.value.startswith("ortc.") and node.value in modules \
                    and node.value != name:
                graph[name].add(node.value)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_cycle_in_ortc() -> None:
    graph = import_graph()
    assert len(graph) > 20 and graph["ortc.session"] >= {"ortc._run", "ortc.session_options"}
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_names_loaded_on_first_use() -> None:
    """``import ortc`` leaves the rules table, sparse tensors, IoBinding, version() and Python's
    ``logging`` unloaded; the names load them on first use, and ``ortc.rules`` stays the function
    after the rules modules are imported by path (a submodule named ``rules`` would have replaced
    it). The rules table holds IoBinding's rules although nothing else imported it."""
    proc = run_python(
        "import sys, ortc\n"
        "lazy = ('ortc.rules_table', 'ortc.rules_render', 'ortc.evidence', 'ortc.slot_rules', "
        "'ortc.sparse', 'ortc.binding', 'ortc._version', 'logging')\n"
        "print([m for m in lazy if m in sys.modules])\n"
        "from ortc import SparseTensor, rules\n"
        "import ortc.rules_render, ortc.rules_cli\n"
        "print(ortc.rules is rules, SparseTensor.__module__, len(rules()) > 20,\n"
        "      {'rules', 'SparseTensor', 'IoBinding', 'version'} <= set(dir(ortc)))\n"
        "print('OrtIoBinding' in {r['type'] for r in rules()}, ortc.IoBinding.__module__,\n"
        "      ortc.version().ortc == ortc.__version__, type(ortc.version()) is ortc.VersionInfo)\n"
        "try:\n"
        "    ortc.no_such_name\n"
        "except AttributeError as exc:\n"
        "    print(exc)\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "[]", "True ortc.sparse True True", "True ortc.binding True True",
        "module 'ortc' has no attribute 'no_such_name'"]


def test_a_first_session_makes_no_enum_nor_recipe_it_does_not_use() -> None:
    """Fifteen of the C API's enums are made when first read, not at import (an IntEnum costs
    about 0.1 ms to create): a first session and run make none of them, nor import the recipe
    dataclasses (a session's recipe is made when asked for), ``dataclasses`` itself (its records
    are ``_record.Record``), LoRA adapters nor session options (none were given), and each enum, once read, is an IntEnum like the others (module, name,
    pickling, ``dir``; ``ortc.LoggingLevel`` is the same class)."""
    proc = run_python(
        "import pickle, threading, numpy as np, ortc, models\n"
        "from enum import IntEnum\n"
        "from ortc import _enums\n"
        "s = ortc.Session(models.add_model())\n"
        "s.run(None, {'a': np.ones(1, np.float32), 'b': np.ones(1, np.float32)})\n"
        "lazy = sorted(_enums._ON_FIRST_USE)\n"
        "print(len(lazy), [n for n in lazy if n in vars(_enums)])\n"
        "import sys\n"
        "print([m for m in ('ortc.recipe', 'ortc.metadata', 'ortc._callbacks', 'ortc.binding',\n"
        "                   'ortc.lora', 'ortc.session_options', 'dataclasses')\n"
        "       if m in sys.modules])\n"
        "from ortc._enums import SparseFormat\n"
        "made = [getattr(_enums, n) for n in lazy]\n"
        "print(all(issubclass(e, IntEnum) and e.__module__ == 'ortc._enums' and e.__qualname__ == n\n"
        "          and e.__doc__.startswith('C enum ``') for n, e in zip(lazy, made)),\n"
        "      SparseFormat is _enums.SparseFormat, set(lazy) <= set(dir(_enums)),\n"
        "      pickle.loads(pickle.dumps(SparseFormat.COO)) is SparseFormat.COO, int(SparseFormat.COO),\n"
        "      ortc.LoggingLevel is _enums.LoggingLevel, ortc.MemType.DEFAULT is _enums.MemType(0))\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["15 []", "[]", "True True True True 1 True True"]
