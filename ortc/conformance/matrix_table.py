"""The committed version matrix (docs/CONFORMANCE.md) read back as data: per check, its result
on each version, and which checks change outcome with the version. The thread rules' Markdown
states version differences from this, so the statement follows the matrix when it is
regenerated (nothing here imports the checks or a library)."""

from __future__ import annotations

import os
import re
from typing import Optional

__all__ = ["Matrix", "read", "default_path", "spans", "varying", "NO_OUTCOME"]

#: cells that say nothing about the claim: a slot the version lacks, no result, a race not seen
NO_OUTCOME = frozenset({"skip", "–", "-", "not seen", ""})

_ROW = re.compile(r"^\| `([\w.-]+)` \|(.*)\|$")


class Matrix:
    """``versions`` (the columns, oldest first) and ``rows`` (check id -> one cell per
    version, as written: pass, known, not seen, skip, **FAIL**, –)."""

    def __init__(self, versions: list[str], rows: dict[str, list[str]]) -> None:
        self.versions = versions
        self.rows = rows

    def outcomes(self, check_id: str) -> list[tuple[str, str]]:
        """(version, cell) for the versions where the check has an outcome."""
        cells = self.rows.get(check_id, [])
        return [(v, c) for v, c in zip(self.versions, cells) if c not in NO_OUTCOME]


def default_path() -> str:
    """docs/CONFORMANCE.md of the checkout this package sits in."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(root, "docs", "CONFORMANCE.md")


def read(path: Optional[str] = None) -> Optional[Matrix]:
    """The matrix in ``path`` (default: the checkout's), None when there is no such file (an
    installed ortc has no docs/)."""
    path = path or default_path()
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    header = next((line for line in lines if line.startswith("| check |")), None)
    if header is None:
        return None
    versions = [c.strip() for c in header.strip().strip("|").split("|")][1:]
    rows = {}
    for line in lines:
        m = _ROW.match(line)
        if m:
            rows[m.group(1)] = [c.strip() for c in m.group(2).split("|")]
    return Matrix(versions, rows)


def spans(matrix: Matrix, check_id: str, skip: str = "") -> list[tuple[str, str]]:
    """(cell, versions) for each run of equal outcomes of the check, oldest first: versions
    is ``1.16.2-1.28.0`` for a run of neighbouring columns, one version alone; cells in
    NO_OUTCOME end a run and are left out, and so is ``skip`` (an outcome already said)."""
    out: list[tuple[str, list[str]]] = []
    prev = ""
    for v, cell in zip(matrix.versions, matrix.rows.get(check_id, [])):
        if cell in NO_OUTCOME:
            prev = ""
            continue
        if cell == prev:
            out[-1][1].append(v)
        else:
            out.append((cell, [v]))
        prev = cell
    return [(cell, vs[0] if len(vs) == 1 else f"{vs[0]}-{vs[-1]}")
            for cell, vs in out if cell != skip]


def varying(matrix: Matrix) -> list[str]:
    """The checks with more than one outcome across the versions that have one, in the
    matrix's order."""
    return [cid for cid in matrix.rows
            if len({cell for _, cell in matrix.outcomes(cid)}) > 1]
