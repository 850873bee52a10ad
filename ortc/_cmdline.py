"""The command line's plumbing, shared by every subcommand: how the command was invoked, a
parser whose usage errors are one line, and the one place that turns a subcommand's outcome
into an exit status and a one-line error. It imports no wrapper module (the subcommands, rules
among them, import it)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, NoReturn

from .errors import Error, LibraryNotFoundError

#: how the command was invoked (``ortc`` or ``python -m ortc``); set by ortc.__main__
PROG = "python -m ortc"


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
    """Run one subcommand: 0/1/2 as its docstring says; errors as ``NAME: error: MESSAGE``."""
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
        _error(name, str(exc))
        return 2
    except LibraryNotFoundError as exc:
        _error(name, str(exc))
        return 1
    except _USER_ERRORS as exc:
        _error(name, str(exc) or type(exc).__name__)
        return 1
    except KeyboardInterrupt:
        _error(name, "interrupted")
        return 130


def _error(name: str, message: str) -> None:
    sys.stdout.flush()
    print(f"{name}: error: {message}", file=sys.stderr)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and exit 2 through run_command)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")
