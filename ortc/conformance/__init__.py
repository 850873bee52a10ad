"""The C-API conformance kit: executable claims about what ONNX Runtime's C API does.

``python -m ortc conformance [--library PATH] [--json FILE] [--markdown FILE]`` runs every check
against one library; ``--matrix 1.19.2,1.32.0`` runs them against several released versions
(fetched with :func:`ortc.conformance.wheels.fetch_library`) and writes docs/CONFORMANCE.md.

Each check has an id, a one-sentence claim, its evidence (an ORT doc, issue, or "none") and the
function that decides it; its status is ``pass`` (the claim holds), ``known`` (it does not, and
that is a recorded fact about ORT: a documented hazard, a crash with its signal, a feature this
version lacks), ``skip`` (the library lacks a slot the check needs) or ``fail`` (unexpected).
Checks call the raw OrtApi slots through :func:`ortc._loader.api`, never ortc's wrappers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from ._registry import Check, Result

__all__ = ["all_checks", "run"]


def all_checks() -> list[Check]:
    from .checks import all_checks as _all

    return _all()


def run(ids: Sequence[str] | None = None) -> list[Result]:
    """Run the checks (all, or those whose id starts with one of ``ids``); return Results."""
    from .runner import run_checks

    chosen = [c for c in all_checks() if not ids or any(c.id.startswith(i) for i in ids)]
    return run_checks(chosen)
