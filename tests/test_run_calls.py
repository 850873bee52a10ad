"""A model runs once per call: every call of ``Session.run`` makes exactly one ORT Run, from
the first call on, whatever the model (the run pipeline guesses nothing it could have to run
again without).

This counts ORT's Run calls (``Api.instrument``) over the differential fuzzer's random graphs
(tests/test_differential.py: value-dependent shapes, lying output declarations, sequences,
If/Loop, strings...), each called many times with the same feeds.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

import ortc
from ortc import _loader
from test_differential import make_case

CASES = int(os.environ.get("ORTC_RUN_CALLS_CASES", "120"))
CALLS = 16


def test_settled_sessions_make_one_run_a_call() -> None:
    count = [0]

    def counting(_name: str, fn: Any) -> Any:
        def call(*args: Any) -> Any:
            count[0] += 1
            return fn(*args)
        return call

    undo = _loader.api().instrument(counting, ["Run"])
    checked, slow = 0, []
    try:
        for i in range(CASES):
            case = make_case([4242, i])
            if case is None:
                continue
            case.calls = CALLS
            case.feed_overridable = [False] * CALLS
            case.bad_call = None
            feeds = case.feeds(0)[0]
            names = case.names[0]
            try:
                sess = ortc.Session(case.model)
                before = count[0]
                sess.run(names, feeds)
                if count[0] - before != 1:
                    slow.append((i, [count[0] - before], sorted(case.features)))
            except ortc.Error:
                continue  # a graph ORT refuses (both bindings do: test_differential)
            with sess:
                per_call = []
                for _ in range(CALLS):
                    before = count[0]
                    sess.run(names, {k: np.array(v) for k, v in feeds.items()})
                    per_call.append(count[0] - before)
            checked += 1
            if any(n != 1 for n in per_call):
                slow.append((i, per_call, sorted(case.features)))
    finally:
        undo()
    assert checked >= CASES // 2, f"only {checked} of {CASES} cases ran"
    assert not slow, "\n".join(f"case [4242, {i}]: Run calls per call {p}; {f}"
                               for i, p, f in slow[:5])
