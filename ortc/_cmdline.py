"""The command line's plumbing, shared by every subcommand: how the command was invoked, a
parser whose usage errors are one line, and the one place that turns a subcommand's outcome
into an exit status and a one-line error. It imports no wrapper module (the subcommands, rules
among them, import it).

Exit statuses, the same for every subcommand and however the input came (an option or an
environment variable): 0 done; 1 the work failed (ORT refused a model, a library exists but
does not load, a check failed); 2 a usage error (an unknown option, a file named that does not
exist, ``--library``/``ORTC_LIBRARY`` naming no library); 130 interrupted. An error is one line
on stderr; ``--verbose`` (any subcommand, or before it) adds its details (where a library
search looked) and, for an error ortc did not expect, the traceback."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable, NoReturn, Sequence

from .errors import Error, LibraryNotFoundError, OrtError

#: how the command was invoked (``ortc`` or ``python -m ortc``); set by ortc.__main__
PROG = "python -m ortc"

#: --verbose given (before the command or among its options): errors keep their details
VERBOSE = False

#: an exit status per kind of failure (see the module docstring)
EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130


def prog(command: str) -> str:
    """The name a subcommand's usage text and errors show: ``ortc info``, ``python -m ortc info``."""
    return f"{PROG} {command}"


class UsageError(SystemExit):
    """A mistake in the command line itself: exit status 2. A SystemExit, as argparse's own
    error is, so a subcommand's main() called from Python still ends the way argparse would."""

    def __init__(self, message: str) -> None:
        super().__init__(2)
        self.message = message

    def __str__(self) -> str:
        return self.message


# what a user's mistake or a failed piece of work raises: one line, no traceback
_USER_ERRORS: tuple[type[BaseException], ...] = (Error, OSError, ValueError, TypeError)


def run_command(name: str, entry: Callable[[list[str]], int], argv: list[str]) -> int:
    """Run one subcommand: its status as the module docstring says; errors as
    ``NAME: error: MESSAGE`` in one line (the rest of a longer message with ``--verbose``)."""
    try:
        code = int(entry(argv) or 0)
        sys.stdout.flush()  # inside the try: a closed pipe shows up here, not at exit
        return code
    except BrokenPipeError:
        # the reader went away (`| head`): not an error; stop writing to the closed pipe
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except UsageError as exc:
        error(name, str(exc))
        return EXIT_USAGE
    except LibraryNotFoundError as exc:
        # a chosen library that does not exist is a mistake in the choice, wherever it was
        # made (--library or ORTC_LIBRARY); one that exists and does not load, failed work
        error(name, str(exc))
        return EXIT_USAGE if exc.missing else EXIT_FAILED
    except _USER_ERRORS as exc:
        text = str(exc) or type(exc).__name__
        if isinstance(exc, OrtError):  # ORT's own text: one sentence broken over lines
            text = " ".join(text.split())
        error(name, text)
        if VERBOSE:
            import traceback

            traceback.print_exc()
        return EXIT_FAILED
    except KeyboardInterrupt:
        error(name, "interrupted")
        return EXIT_INTERRUPTED


def error(name: str, message: str) -> None:
    """``NAME: error: MESSAGE`` on stderr: the message's first line, and with ``--verbose``
    the rest (a search's places, a tool's output)."""
    sys.stdout.flush()
    first, _, details = message.strip().partition("\n")
    if details and not VERBOSE:
        first += " (details: --verbose)"
    print(f"{name}: error: {first}", file=sys.stderr)
    if details and VERBOSE:
        print(details, file=sys.stderr)


def take_verbose(args: list[str]) -> list[str]:
    """``args`` without ``--verbose``, which sets :data:`VERBOSE` (accepted before a command
    and among its options, so every subcommand has it); ``--`` ends the search."""
    global VERBOSE
    out: list[str] = []
    for i, arg in enumerate(args):
        if arg == "--":
            return out + args[i:]
        if arg == "--verbose":
            VERBOSE = True
        else:
            out.append(arg)
    return out


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and exit 2 through run_command), and every
    subcommand lists ``--verbose`` (ortc.__main__ takes it out of the arguments first)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.add_argument("--verbose", action=_Verbose, nargs=0, default=False,
                          help="errors with their details (where a search looked, a tool's "
                               "output, a traceback for an unexpected error)")

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


class _Verbose(argparse.Action):
    """``--verbose`` given to a subcommand's main() called directly (not through __main__)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        global VERBOSE
        VERBOSE = True
        setattr(namespace, self.dest, True)
