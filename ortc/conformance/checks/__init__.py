"""The checks, one module per family; importing this package registers them all in order."""

from __future__ import annotations

import importlib
import os

from .._registry import CHECKS, Check
from . import (version, env, create, session, run, values, sparse,  # noqa: F401
               lifetime, memory, binding, threads, send, kernel, newest, objects,
               shared, editor, tracker)

__all__ = ["all_checks", "by_id"]

# Your own checks: ORTC_CONFORMANCE_PLUGINS=pkg.mod1,pkg.mod2 names modules that register more
# checks with ortc.conformance._registry.check; they run after the built-in ones.
for _name in filter(None, os.environ.get("ORTC_CONFORMANCE_PLUGINS", "").split(",")):
    importlib.import_module(_name.strip())


def all_checks() -> list[Check]:
    return list(CHECKS)


def by_id(check_id: str) -> Check:
    for c in CHECKS:
        if c.id == check_id:
            return c
    raise KeyError(f"no conformance check {check_id!r}")
