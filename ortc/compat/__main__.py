"""``python -m ortc.compat SCRIPT [ARGS...]`` (or ``-m MODULE [ARGS...]``): run a program as
``python`` would, with ``import onnxruntime`` resolving to ortc.compat."""

from __future__ import annotations

import builtins
import importlib.machinery
import os
import runpy
import sys
import types
import zipfile

USAGE = "usage: python -m ortc.compat SCRIPT [ARGS...] | -m MODULE [ARGS...]"


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    from . import install

    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        sys.argv = [argv[1], *argv[2:]]  # sys.path[0] is already the cwd, as with python -m
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    if not os.path.exists(script):  # as python says it, without a traceback
        print(f"python -m ortc.compat: can't open file {os.path.abspath(script)!r}: "
              f"[Errno 2] No such file or directory", file=sys.stderr)
        return 2
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # as "python SCRIPT" sets it
    if os.path.isdir(script) or zipfile.is_zipfile(script):  # a __main__.py inside
        runpy.run_path(script, run_name="__main__")
    else:
        _run_file(script)
    return 0


def _run_file(script: str) -> None:
    """Run a script file as ``python SCRIPT`` does: ``__file__`` absolute (a script that changes
    directory still finds its files next to it), ``sys.argv[0]`` as given, in a ``__main__``
    module that stays in ``sys.modules`` (runpy.run_path would set both names to one path)."""
    path = os.path.abspath(script)
    with open(path, "rb") as f:
        code = compile(f.read(), path, "exec")
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=path, __cached__=None, __builtins__=builtins,
                         __loader__=importlib.machinery.SourceFileLoader("__main__", path))
    sys.modules["__main__"] = main
    exec(code, main.__dict__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
