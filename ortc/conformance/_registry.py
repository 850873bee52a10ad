"""Check declarations: the registry, the outcome exceptions and the result record.

A check is a function taking a :class:`~ortc.conformance._capi.Ctx`. It returns a short detail
string when its claim holds (``pass``), raises :class:`Known` when the claim is known not to hold
on this library (a documented hazard or a version-specific gap: the matrix records it), raises
:class:`NotSeen` when it provokes a race that did not show in its tries (no verdict: a race not
seen is not a claim that holds), raises :class:`Skip` only when the library lacks a slot the
check needs, and anything else (``Fail``, an assertion, any exception) is an unexpected failure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

__all__ = ["Check", "Result", "Known", "NotSeen", "Skip", "Fail", "check", "CHECKS", "STATUSES"]

STATUSES = ("pass", "fail", "known", "not-seen", "skip")


class Outcome(Exception):
    """Base of the exceptions a check raises to report something other than a pass."""

    status = "fail"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class Known(Outcome):
    """The claim does not hold here, and that is a recorded fact about ORT, not a surprise."""

    status = "known"


class NotSeen(Outcome):
    """A race the check provokes did not show in its tries on this library: no verdict either
    way (reported apart from ``pass``, which would read as "safe here")."""

    status = "not-seen"


class Skip(Outcome):
    """The library lacks a slot the check needs (its API version is too old)."""

    status = "skip"


class Fail(Outcome):
    """The claim does not hold, unexpectedly."""

    status = "fail"


@dataclass(frozen=True)
class Check:
    id: str
    claim: str
    evidence: str
    func: Callable[[Any], Optional[str]]
    #: OrtApi slots the check needs; a missing one makes it ``skip``
    slots: tuple[str, ...] = ()
    #: run in a child process (anything that may crash or needs a fresh ORT env)
    child: bool = False
    #: a crash of the child is the recorded hazard: status ``known`` with the signal
    crash: bool = False
    timeout: float = 60.0
    #: ORT types the check makes on one thread and uses on another (the only checks a Send
    #: verdict may cite as seen behaviour: tests/test_evidence.py holds evidence.py to this)
    crosses: tuple[str, ...] = ()

    @property
    def test(self) -> str:
        """The function that decides the check, as ``module:function``."""
        return f"{self.func.__module__}:{self.func.__name__}"


@dataclass
class Result:
    id: str
    claim: str
    status: str
    evidence: str
    seconds: float
    detail: str
    test: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "claim": self.claim, "status": self.status,
                "evidence": self.evidence, "seconds": round(self.seconds, 4),
                "detail": self.detail, "test": self.test}


CHECKS: list[Check] = []
_IDS: set[str] = set()


def check(id: str, claim: str, evidence: str = "none", *, slots: tuple[str, ...] = (),
          child: bool = False, crash: bool = False, timeout: float | None = None,
          crosses: tuple[str, ...] = ()
          ) -> Callable[[Callable[[Any], Optional[str]]], Callable[[Any], Optional[str]]]:
    """Register the decorated function as the check ``id``. A crash-type check's child gets
    20 s (a hang is then its finding), any other 60 s, unless ``timeout`` says otherwise.
    ``crosses`` names the ORT types whose objects the check uses on a thread other than the
    one that made them."""
    if timeout is None:
        timeout = 20.0 if crash else 60.0

    def deco(fn: Callable[[Any], Optional[str]]) -> Callable[[Any], Optional[str]]:
        if id in _IDS:
            raise ValueError(f"duplicate conformance check id {id!r}")
        _IDS.add(id)
        CHECKS.append(Check(id, claim, evidence, fn, tuple(slots), child or crash, crash,
                            timeout, tuple(crosses)))
        return fn

    return deco


def register(c: Check) -> None:
    """Register a check built without the decorator (parametrised families)."""
    if c.id in _IDS:
        raise ValueError(f"duplicate conformance check id {c.id!r}")
    _IDS.add(c.id)
    CHECKS.append(c)
