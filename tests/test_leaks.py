"""Leaks: 100,000 runs, 2,000 session create/close cycles and 10,000 value round trips.

Each workload runs in a fresh child process (the test runner's own allocations would drown a
leak of a few bytes per call) after a warm-up that lets ORT's arenas and Python's caches reach
their steady size. The child reads its resident set size from /proc/self/statm before and after;
growth must stay within 5 MB, and ``ortc.live_handles()`` must be back to its starting value.
Marked slow (about a minute on two cores); `make test` runs it.
"""

from __future__ import annotations

import json
import sys

import pytest

from conftest import run_python

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm"),
]

LIMIT_MB = 5.0

CHILD = r'''
import gc, json, os, sys
import numpy as np
import models, ortc

PAGE = os.sysconf("SC_PAGE_SIZE")

def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20

F32 = np.float32
ADD = models.add_model(F32, ["n"])
STR = models.identity_model(models.T.STRING, [2])
ZIP = models.zipmap_model()
MLP = models.mlp_model(2, 8)
a, b = np.arange(3, dtype=F32), np.ones(3, F32)
strings = np.array(["a", "é"], dtype=object)

def runs(n):
    s = ortc.Session(ADD, intra_op_num_threads=1)
    t = ortc.Session(STR, intra_op_num_threads=1)
    z = ortc.Session(ZIP, intra_op_num_threads=1)
    ro = ortc.RunOptions()
    bind = s.io_binding()
    bind.bind_input("a", a)
    bind.bind_input("b", b)
    bind.bind_output("c")
    for i in range(n):
        k = i % 20
        if k < 12:
            s.run(None, {"a": a, "b": b})                       # the fast path
        elif k == 12:
            s.run(None, {"a": [0.0, 1.0, 2.0], "b": b})         # converted input
        elif k == 13:
            t.run(None, {"x": strings})                         # strings both ways
        elif k == 14:
            z.run(None, {"x": np.ones((1, 3), F32)})            # sequence of maps out
        elif k == 15:
            s.run_with_values(None, {"a": a, "b": b})
        elif k == 16:
            s.run_with_binding(bind)
            bind.get_outputs()
        elif k == 17:
            s.run(None, {"a": a, "b": b}, timeout=3600)         # a deadline, cancelled
        elif k == 18:
            try:                                                # the error path
                s.run(None, {"a": a, "b": np.ones(4, F32)})
            except ortc.OrtError:
                pass
        else:
            try:
                s.run(None, {"a": a.astype(np.float64), "b": b})
            except ortc.InvalidArgument:
                pass
    for h in (bind, ro, s, t, z):
        h.close()

def sessions(n):
    blobs = [ADD, MLP, ZIP, STR]
    for i in range(n):
        opts = ortc.SessionOptions(intra_op_num_threads=1)
        with ortc.Session(blobs[i % 4], opts) as s:
            if i % 4 == 0:
                s.run(None, {"a": a, "b": b})
            s.metadata()
            if i % 8 == 0:
                s.io_binding().close()
                s.allocator().close()
        opts.close()

def values(n):
    for i in range(n):
        k = i % 5
        if k == 0:
            v = ortc.Value.from_numpy(np.arange(64, dtype=F32))
            arr = v.numpy()
            v.close()
            del arr
        elif k == 1:
            v = ortc.Value.from_numpy(strings)
            v.to_python()
            v.close()
        elif k == 2:
            v = ortc.Value.from_sequence([a, b])
            v.to_python()
            v.close()
        elif k == 3:
            v = ortc.Value.from_map({1: 2.0, 3: 4.0})
            v.to_python()
            v.close()
        else:
            v = ortc.Value.from_numpy(np.ones((4, 4)))
            v.shape, v.element_type, v.type_info, v.memory_info
            del v   # the finalizer releases it

work, count, warm = {"runs": (runs, 100_000, 5_000), "sessions": (sessions, 2_000, 200),
                     "values": (values, 10_000, 1_000)}[sys.argv[1]]
work(warm)
gc.collect()
handles0, rss0 = ortc.live_handles(), rss_mb()
work(count)
gc.collect()
handles1, rss1 = ortc.live_handles(), rss_mb()
print(json.dumps({"count": count, "rss_before_mb": round(rss0, 2), "rss_after_mb": round(rss1, 2),
                  "growth_mb": round(rss1 - rss0, 2), "handles_before": handles0,
                  "handles_after": handles1}))
'''


def measure(workload: str) -> dict:
    code = "import sys; sys.argv = ['leak', %r]\n" % workload + CHILD
    p = run_python(code, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    result = json.loads(p.stdout.strip().splitlines()[-1])
    print(workload, result)
    return result


@pytest.mark.parametrize("workload", ["runs", "sessions", "values"])
def test_no_growth(workload: str) -> None:
    r = measure(workload)
    assert r["handles_after"] == r["handles_before"], r
    assert r["growth_mb"] <= LIMIT_MB, r
