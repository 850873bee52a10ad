"""pytest plugin: with ``ORTC_SLOT_COVERAGE=FILE`` set, record the OrtApi slots the tests call.

Registered from tests/conftest.py (``pytest_plugins``). Without the variable it does nothing.
The counting wraps the slots of the facade when ortc loads its library (not earlier, so tests
that choose a library still can), and conformance-kit children record their own calls into the
same file. Report with ``python -m ortc.conformance.coverage FILE``.
"""

from __future__ import annotations

import os

from ortc.conformance import coverage


def pytest_configure(config: object) -> None:
    path = os.environ.get(coverage.ENV_VAR)
    if path:
        coverage.install(path)


def pytest_unconfigure(config: object) -> None:
    coverage.flush()
