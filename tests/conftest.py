"""Shared fixtures: models come from tests/models.py (built with onnx.helper, never downloaded)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any, Iterator

import numpy as np
import pytest

import ortc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytest_plugins = ["_coverage_plugin"]  # ORTC_SLOT_COVERAGE=FILE records the slots tests call


@pytest.fixture(autouse=True)
def _strict_thread_checks() -> Iterator[None]:
    """Every test starts and ends in the default policy."""
    old = ortc.set_thread_checks("strict")
    yield
    ortc.set_thread_checks(old)


def run_python(code: str, env: dict[str, str] | None = None, timeout: float = 120,
               python_args: tuple[str, ...] = (), cwd: str | None = None
               ) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter with ortc importable (``python_args`` before ``-c``,
    e.g. warning filters); returns the finished process."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = ROOT + os.pathsep + os.path.join(ROOT, "tests")
    full_env.update(env or {})
    return subprocess.run([sys.executable, *python_args, "-c", code], capture_output=True,
                          text=True, env=full_env, timeout=timeout, cwd=cwd)


@pytest.fixture
def add_session() -> Iterator[Any]:
    import models

    with ortc.Session(models.add_model(np.float32, ["n"]), intra_op_num_threads=1) as s:
        yield s


def conformance_matrix() -> tuple[list[str], dict[str, list[str]]]:
    """docs/CONFORMANCE.md's matrix (versions, check id -> a cell per version), parsed here on
    its own, not by the code under test."""
    import re

    with open(os.path.join(ROOT, "docs", "CONFORMANCE.md"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    header = next(line for line in lines if line.startswith("| check |"))
    versions = [c.strip() for c in header.strip("|").split("|")][1:]
    rows = {}
    for line in lines:
        m = re.match(r"^\| `([\w.-]+)` \|(.*)\|$", line)
        if m:
            rows[m.group(1)] = [c.strip() for c in m.group(2).split("|")]
    return versions, rows
