"""Command line: ``python -m ortc {version,info,run,rules,conformance,bench} ...``.

Each subcommand lives in its own module and exposes ``main(argv) -> int``.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Callable

_COMMANDS: dict[str, tuple[str, str]] = {
    "version": ("ortc.cli", "print the loaded library, its version and the negotiated API"),
    "info": ("ortc.cli", "describe a model: inputs, outputs, metadata"),
    "run": ("ortc.cli", "run a model on random or .npy inputs and print the outputs"),
    "rules": ("ortc.rules_cli", "print the thread rules (--format json|markdown|rust)"),
    "conformance": ("ortc.conformance.cli", "check the C API's behaviour on a library"),
    "bench": ("bench.runner", "measure per-call latency against onnxruntime and a C loop"),
}


def _usage() -> str:
    lines = ["usage: python -m ortc COMMAND [ARGS]", "", "commands:"]
    lines += [f"  {name:<12} {doc}" for name, (_, doc) in _COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0
    name, rest = args[0], args[1:]
    if name not in _COMMANDS:
        print(f"unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module_name = _COMMANDS[name][0]
    if module_name.startswith("bench."):
        # bench/ sits beside the package in a source checkout
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    module = importlib.import_module(module_name)
    entry: Callable[[list[str]], int] = getattr(module, "main_" + name, None) or module.main
    return int(entry(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
