"""Command line: ``ortc`` (or ``python -m ortc``) ``{version,info,run,rules,conformance,bench}``.

Each subcommand lives in its own module and exposes ``main(argv) -> int``. Exit status: 0 done,
1 the work failed (ORT refused the model, a run failed, a check failed), 2 a usage error
(unknown command or option, a missing file, a malformed argument). A user's mistake is one
line on stderr naming the problem, never a traceback.
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
    "bench": ("bench.runner", "measure per-call latency against onnxruntime and a C loop "
                              "(needs a source checkout)"),
}


def invoked_as(argv0: str | None = None) -> str:
    """How the user started us: ``ortc`` for the console script, else ``python -m ortc``."""
    base = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    if base.endswith(".exe"):
        base = base[:-4]
    return base if base.startswith("ortc") and not base.endswith(".py") else "python -m ortc"


def _usage(prog: str) -> str:
    lines = [f"usage: {prog} [--version] [--verbose] COMMAND [ARGS]", "", "commands:"]
    lines += [f"  {name:<12} {doc}" for name, (_, doc) in _COMMANDS.items()]
    lines += ["", f"`{prog} COMMAND --help` describes a command's arguments. Errors are one "
              "line; --verbose adds their details.",
              "Exit status: 0 done, 1 the work failed, 2 a usage error (a file or library "
              "named that does not exist too), 130 interrupted."]
    return "\n".join(lines)


def _source_checkout() -> str | None:
    """The folder holding bench/ (a source checkout or an unpacked sdist), if there is one."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for folder in (package_parent, os.getcwd()):
        # ortc's own tree (not any folder that happens to hold a bench/runner.py)
        if all(os.path.isfile(os.path.join(folder, *f)) for f in
               (("bench", "runner.py"), ("build_ffi.py",), ("include", "ortc_api.h"))):
            return folder
    return None


def main(argv: list[str] | None = None) -> int:
    from . import _cmdline

    args = _cmdline.take_verbose(list(sys.argv[1:] if argv is None else argv))
    prog = _cmdline.PROG = invoked_as()
    return _cmdline.run_command(prog, lambda rest: _dispatch(prog, rest), args)


def _dispatch(prog: str, args: list[str]) -> int:
    from . import _cmdline

    if not args:  # no command is a usage error, as argparse treats a missing argument
        print(_usage(prog), file=sys.stderr)
        return 2
    if args[0] in ("-h", "--help", "help"):
        print(_usage(prog))
        return 0
    if args[0] in ("-V", "--version"):
        from . import __version__
        print(f"ortc {__version__}")
        return 0
    name, rest = args[0], args[1:]
    if name not in _COMMANDS:
        from .errors import closest_name
        msg = closest_name(name, _COMMANDS, "command")
        if "did you mean" not in msg:
            msg += f" (commands: {', '.join(_COMMANDS)})"
        print(f"{prog}: error: {msg}", file=sys.stderr)
        return 2
    module_name = _COMMANDS[name][0]
    if module_name.startswith("bench."):
        checkout = _source_checkout()
        if checkout is None and any(a in ("-h", "--help") for a in rest):
            # the options live in bench/runner.py, which a wheel lacks: say what it is
            print(f"usage: {prog} bench [OPTIONS]\n\n{_COMMANDS[name][1]}.\n\nbench/ is not "
                  f"installed with the wheel: in a clone of ortc's repository or an unpacked "
                  f"sdist, `{prog} bench --help` lists its options and `make bench` runs it.")
            return 0
        if checkout is None:
            print(f"{prog} bench: needs a source checkout (bench/ is not installed with the "
                  f"wheel): clone ortc's repository or unpack its sdist, then run `make bench` "
                  f"or `python -m ortc bench` in that folder", file=sys.stderr)
            return 2
        sys.path.insert(0, checkout)
    module = importlib.import_module(module_name)
    entry: Callable[[list[str]], int] = getattr(module, "main_" + name, None) or module.main
    return _cmdline.run_command(f"{prog} {name}", entry, rest)


if __name__ == "__main__":
    sys.exit(main())
