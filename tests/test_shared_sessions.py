"""Unpickled sessions: built on first use, once per process and recipe (model content plus
options), weakly kept; recipes name their model's content; out-of-band model bytes; Dask's
tokenizer names a session without building it (ortc/session.py, ortc/recipe.py)."""

from __future__ import annotations

import gc
import pickle
import threading
import time
import warnings
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper

import models
import ortc
import ortc.batch
import ortc.session as session_module
from ortc.recipe import RecipeError, RecipePathWarning, content_digest, path_options

F32 = np.float32
MODEL = models.mlp_model(3, 16, "batch")
X = np.random.default_rng(5).standard_normal((4, 16)).astype(F32)


@pytest.fixture(autouse=True)
def _no_idle_session() -> Any:
    """Each test starts and ends without the process's idle shared session (session._idle)."""
    session_module.release_idle()
    yield
    session_module.release_idle()


def _counts() -> tuple[int, int]:
    gc.collect()
    live = ortc.live_handles()
    return live.get("Session", 0), live.get("SharedSession", 0)


def _shipped(**options: Any) -> bytes:
    """A session's pickle, the session closed: what a worker process receives."""
    with ortc.Session(MODEL, intra_op_num_threads=1, **options) as s:
        data = pickle.dumps(s)
        want = s.run(None, {"x": X})[0].copy()
    _shipped.want = want  # type: ignore[attr-defined]
    return data


def _add_or_sub(op: str) -> bytes:
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in "abc"]
    return models._bytes(models.make_model([helper.make_node(op, ["a", "b"], ["c"])],
                                           vi[:2], vi[2:]))


def test_an_unpickled_session_is_built_on_first_use_not_when_unpickled() -> None:
    data = _shipped()
    before = _counts()
    s = pickle.loads(data)
    assert _counts() == before  # nothing built: a scheduler passing it on pays nothing
    assert "not built yet" in repr(s) and not s.closed
    assert s.providers == ["CPUExecutionProvider"] and s.thread_rules()["run"] == "shared"
    assert _counts() == before  # neither providers nor thread rules need the model
    y = s.run(None, {"x": X})[0]
    assert y.tobytes() == _shipped.want.tobytes()  # type: ignore[attr-defined]
    assert _counts() == (before[0] + 1, before[1] + 1) and "not built" not in repr(s)
    s.close()
    assert _counts() == (before[0], before[1] + 1)  # its ORT session kept idle (_idle)
    session_module.release_idle()
    assert _counts() == before


@pytest.mark.parametrize("first_use", ["inputs", "outputs", "overridable_initializers",
                                       "metadata", "run_with_values", "io_binding"])
def test_every_use_that_needs_the_model_builds_it(first_use: str) -> None:
    s = pickle.loads(_shipped())
    if first_use == "run_with_values":
        got: Any = s.run_with_values(None, {"x": X})
        assert got[0].numpy().tobytes() == _shipped.want.tobytes()  # type: ignore[attr-defined]
    else:
        attr = getattr(s, first_use)
        got = attr() if callable(attr) else attr
        if first_use == "inputs":
            assert [i.name for i in got] == ["x"]
        if first_use == "io_binding":
            got.close()
    assert "not built" not in repr(s) and _counts()[1] == 1
    s.close()


def test_closed_before_first_use_raises_closed_error_and_builds_nothing() -> None:
    s = pickle.loads(_shipped())
    s.close()
    s.close()  # idempotent
    assert s.closed
    for use in (lambda: s.run(None, {"x": X}), lambda: s.inputs, s.metadata,
                lambda: pickle.dumps(s)):
        with pytest.raises((ortc.ClosedError, TypeError), match="closed"):
            use()
    assert _counts()[1] == 0


def test_unpickled_sessions_of_one_recipe_share_one_ort_session_weakly() -> None:
    data = _shipped()
    a, b = pickle.loads(data), pickle.loads(data)
    c = pickle.loads(_shipped(enable_mem_pattern=False))  # other options: another session
    for s in (a, b, c):
        assert s.run(None, {"x": X})[0].tobytes() == \
            _shipped.want.tobytes()  # type: ignore[attr-defined]
    assert _counts()[1] == 2
    assert int(ortc._ffi.ffi.cast("uintptr_t", a._ptr)) == \
        int(ortc._ffi.ffi.cast("uintptr_t", b._ptr))
    a.close()  # closing one Session leaves the others running
    assert b.run(None, {"x": X})[0].shape == (4, 16)
    with pytest.raises(ortc.ClosedError):
        a.run(None, {"x": X})
    del s, c  # (the loop variable was the last user): c's kept idle
    assert _counts()[1] == 2
    b.close()  # the last user gone: idle in place of c's, which is released
    assert _counts()[1] == 1
    session_module.release_idle()
    assert _counts()[1] == 0
    again = pickle.loads(data)
    again.run(None, {"x": X})  # built again on demand
    assert _counts()[1] == 1
    again.close()


def test_a_session_unpickled_beside_its_original_uses_the_original() -> None:
    with ortc.Session(MODEL, intra_op_num_threads=1) as s:
        copy = pickle.loads(pickle.dumps(s))
        copy.run(None, {"x": X})
        assert _counts()[1] == 0  # no second build of the same model in this process
        assert int(ortc._ffi.ffi.cast("uintptr_t", copy._ptr)) == \
            int(ortc._ffi.ffi.cast("uintptr_t", s._ptr))
    # the original closed: its ORT session stays until the copy goes
    assert copy.run(None, {"x": X})[0].shape == (4, 16)
    copy.close()


def test_two_threads_first_using_one_unpickled_session_build_it_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    built = []
    real = session_module.SharedSession.from_recipe.__func__  # type: ignore[attr-defined]

    def counting(cls: Any, recipe: Any, **kw: Any) -> Any:
        built.append(threading.get_ident())
        return real(cls, recipe, **kw)

    monkeypatch.setattr(session_module.SharedSession, "from_recipe", classmethod(counting))
    data = _shipped()
    one = pickle.loads(data)
    other = pickle.loads(data)  # another Session of the same recipe
    barrier = threading.Barrier(4)
    outs: list[bytes] = []
    errors: list[BaseException] = []

    def first_use(s: ortc.Session) -> None:
        try:
            barrier.wait(5)
            outs.append(s.run(None, {"x": X})[0].tobytes())
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=first_use, args=(s,)) for s in (one, one, other, other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    assert len(built) == 1 and len(outs) == 4
    assert set(outs) == {_shipped.want.tobytes()}  # type: ignore[attr-defined]
    one.close()
    other.close()


def test_a_recipe_names_its_models_content() -> None:
    with ortc.Session(MODEL) as s, ortc.Session(bytearray(MODEL)) as t:
        assert s.recipe().model_digest == content_digest(MODEL) == t.recipe().model_digest
        assert s.recipe().model_digest.startswith("sha256:")  # type: ignore[union-attr]


def test_a_replaced_model_file_is_refused_not_used(tmp_path: Any) -> None:
    path = tmp_path / "m.onnx"
    path.write_bytes(_add_or_sub("Add"))
    feeds = {"a": np.ones(3, F32), "b": np.ones(3, F32)}
    with ortc.Session(str(path)) as s:
        data = pickle.dumps(s)
        recipe = s.recipe()
    path.write_bytes(_add_or_sub("Sub"))  # the next deploy writes the same path
    shipped = pickle.loads(data)  # unpickling reads no file
    with pytest.raises(RecipeError, match="not the model this recipe was made from"):
        shipped.run(None, feeds)
    with pytest.raises(RecipeError, match="replaced"):
        ortc.Session.from_recipe(recipe)
    path.write_bytes(_add_or_sub("Add"))  # the original back: accepted again
    assert shipped.run(None, feeds)[0].tolist() == [2, 2, 2]
    shipped.close()


def test_a_session_whose_file_changed_before_pickling_refuses_to_pickle(tmp_path: Any) -> None:
    path = tmp_path / "m.onnx"
    path.write_bytes(_add_or_sub("Add"))
    with ortc.Session(str(path)) as s:
        path.write_bytes(_add_or_sub("Sub") + b"")
        with pytest.raises(RecipeError, match="changed after this session read it"):
            pickle.dumps(s)


def test_dask_tokenizes_a_session_from_its_recipe_without_building_it() -> None:
    dask_base = pytest.importorskip("dask.base", reason="the dask extra: make test installs it")
    data = _shipped()
    s = pickle.loads(data)
    token = dask_base.tokenize(s)
    assert "not built yet" in repr(s) and _counts()[1] == 0
    assert token == dask_base.tokenize(pickle.loads(data))  # deterministic, by content
    with ortc.Session(MODEL, intra_op_num_threads=1) as original:
        assert dask_base.tokenize(original) == token
    with ortc.Session(MODEL, intra_op_num_threads=2) as other:
        assert dask_base.tokenize(other) != token
    s.close()


def test_model_bytes_go_out_of_band_with_protocol_5() -> None:
    with ortc.Session(MODEL, intra_op_num_threads=1) as s:
        buffers: list[pickle.PickleBuffer] = []
        data = pickle.dumps(s, protocol=5, buffer_callback=buffers.append)
        assert len(buffers) == 1 and buffers[0].raw().nbytes == len(MODEL)
        assert len(data) < 1000  # the stream carries no copy of the model
        in_band = pickle.dumps(s, protocol=5)
        assert len(MODEL) < len(in_band) < len(MODEL) + 1000  # still one copy in band
        # received out of band into a buffer of its own (a network frame) ...
        frame = bytearray(buffers[0].raw())
        a = pickle.loads(data, buffers=[frame])
        assert type(a.recipe().model_bytes) is bytes
        # ... while this process holds those bytes already: kept, the frame not copied
        assert a.recipe().model_bytes is MODEL
        a.close()
    s2 = pickle.loads(data, buffers=[bytearray(MODEL)])
    s3 = pickle.loads(data, buffers=[bytearray(MODEL)])
    assert s2.recipe().model_bytes is s3.recipe().model_bytes  # one copy per process
    assert s3.run(None, {"x": X})[0].shape == (4, 16)
    s2.close()
    s3.close()


def test_profiling_sessions_are_not_shared_and_warn(tmp_path: Any) -> None:
    prefix = str(tmp_path / "prof")
    with pytest.warns(RecipePathWarning, match="prof"):
        with ortc.Session(MODEL, enable_profiling=True, profile_file_prefix=prefix) as s:
            data = pickle.dumps(s)
        a, b = pickle.loads(data), pickle.loads(data)
        a.run(None, {"x": X})
        b.run(None, {"x": X})
    assert _counts()[1] == 2  # one each: each ends its own profile
    assert a.end_profiling() != b.end_profiling()
    a.close()
    b.close()


def test_path_options_are_listed_and_a_missing_library_is_named(tmp_path: Any) -> None:
    out = str(tmp_path / "opt.onnx")
    with ortc.Session(MODEL, optimized_model_filepath=out) as s:
        r = s.recipe()
    assert path_options(r.options) == {"reads": (), "writes": (out,)}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecipePathWarning)
        with pytest.raises(RecipePathWarning, match="opt.onnx.*every process"):
            ortc.Session.from_recipe(r)
    gone = str(tmp_path / "libgone.so")
    import dataclasses

    broken = dataclasses.replace(r, options=dataclasses.replace(
        r.options, settings=(), custom_op_libraries=(gone,)))
    with pytest.raises(ortc.NoSuchFile, match="libgone.so.*every machine"):
        ortc.Session.from_recipe(broken)


def _in_a_forked_child(work: Any) -> str:
    import os

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        try:
            msg = f"ran: {work()}"
        except BaseException as exc:  # noqa: BLE001
            msg = f"{type(exc).__name__} {exc}"
        os.write(w, msg.encode()[:4000])
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        msg = f.read().decode()
    os.waitpid(pid, 0)
    return msg


def test_a_forked_child_builds_its_own_once_for_all_unpickled_sessions() -> None:
    """Built (or not) in the parent, the unpickled sessions of one recipe share one new ORT
    session in a forked child; the parent's stay as they were."""
    data = _shipped()
    built, unbuilt = pickle.loads(data), pickle.loads(data)
    built.run(None, {"x": X})
    want = _shipped.want.tobytes()  # type: ignore[attr-defined]

    def child() -> str:
        same = [s.run(None, {"x": X})[0].tobytes() == want for s in (built, unbuilt)]
        return f"{same} {ortc.live_handles().get('SharedSession', 0)}"

    assert _in_a_forked_child(child) == "ran: [True, True] 1"
    assert "not built yet" in repr(unbuilt)  # the child's build is the child's
    assert built.run(None, {"x": X})[0].tobytes() == want
    built.close()
    unbuilt.close()


def test_c_contiguous_feeds_are_read_in_place_and_other_layouts_copied_as_documented() -> None:
    """The docs' "without a copy" holds for C-contiguous arrays only (README, Session.run,
    run_async, Value.from_numpy); a strided view is copied, so writes after the copy do not
    reach the tensor."""
    base = np.arange(12, dtype=F32).reshape(3, 4)
    in_place = ortc.Value.from_numpy(base)
    base[0, 0] = 100.0
    assert in_place.numpy()[0, 0] == 100.0  # the same memory
    strided = base[:, ::2]
    assert not strided.flags.c_contiguous
    copied = ortc.Value.from_numpy(strided)
    base[0, 0] = -1.0
    assert copied.numpy()[0, 0] == 100.0 and copied.numpy().tolist() == \
        [[100.0, 2.0], [4.0, 6.0], [8.0, 10.0]]
    in_place.close()
    copied.close()


def test_a_build_once_runs_once_and_a_claim_its_caller_left_behind_stops_nobody() -> None:
    """session._build_once (a Session's first use after fork or unpickling, a recipe's one ORT
    session): of threads that come together one builds and the others wait and find it done;
    a build that fails leaves it to the next in line; and a claim whose call ended without
    taking it back (an exception between its listing and its try, as a signal handler's can
    raise on the main thread) is dropped by the next caller instead of waiting for good."""
    import sys

    def returned_frame() -> Any:
        return sys._getframe()

    built: list[int] = []
    claims: list[Any] = [returned_frame()]  # left behind by a call that has returned
    session_module._build_once(claims, lambda: bool(built), lambda: built.append(1))
    assert built == [1] and claims == []

    built.clear()
    attempts: list[int] = []
    barrier = threading.Barrier(6)

    def build() -> None:
        attempts.append(threading.get_ident())
        if len(attempts) == 1:
            raise RuntimeError("the first build fails")
        time.sleep(0.05)
        built.append(1)

    outcomes: list[str] = []

    def first_use() -> None:
        barrier.wait(5)
        try:
            session_module._build_once(claims, lambda: bool(built), build)
            outcomes.append("ok")
        except RuntimeError as exc:
            outcomes.append(str(exc))

    threads = [threading.Thread(target=first_use) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(outcomes) == ["ok"] * 5 + ["the first build fails"], outcomes
    assert len(attempts) == 2 and built == [1] and claims == []


def test_the_last_released_shared_session_is_kept_idle_one_at_most() -> None:
    """A worker's tasks each unpickle the session and drop it: the first builds, the next ones
    find it idle (session._idle). One idle session per process: another recipe's going takes
    its place and releases it; ortc.batch.forget() lets it go; a client's own Session (not a
    SharedSession) is never kept."""
    data, other = _shipped(), _shipped(enable_mem_pattern=False)
    n, _ = _counts()  # (Sessions other tests' modules keep)
    for _ in range(3):
        s = pickle.loads(data)
        assert s.run(None, {"x": X})[0].tobytes() == \
            _shipped.want.tobytes()  # type: ignore[attr-defined]
        del s
        assert _counts() == (n, 1)
    import weakref

    first = weakref.ref(session_module._idle[0])
    t = pickle.loads(other)
    t.run(None, {"x": X})
    assert _counts() == (n + 1, 2)
    t.close()
    assert _counts() == (n, 1) and first() is None  # the other's replaced it, released
    assert ortc.batch.forget() == 0 and _counts() == (n, 0)
    with ortc.Session(MODEL, intra_op_num_threads=1) as own:
        copy = pickle.loads(pickle.dumps(own))
        copy.run(None, {"x": X})
        del copy
        assert session_module._idle == []


def test_threads_letting_sessions_go_at_once_leave_one_idle() -> None:
    blobs = [_shipped(), _shipped(enable_mem_pattern=False)]
    n, _ = _counts()
    barrier = threading.Barrier(4)

    def task(k: int) -> None:
        sessions = [pickle.loads(blobs[k % 2]) for _ in range(20)]
        for s in sessions:
            s.run(None, {"x": X})
        barrier.wait()
        del sessions[:]

    threads = [threading.Thread(target=task, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(session_module._idle) == 1 and _counts() == (n, 1)


def _in_a_fork(child: Any) -> str:
    """What ``child()`` returns (a str; an exception's repr) in a forked child, read through a
    pipe; the test fails if the child does not end within 30 s (stuck in its fork hooks)."""
    import os

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - reports through the pipe
        try:
            msg = child()
        except BaseException as exc:  # noqa: BLE001
            msg = repr(exc)
        os.write(w, msg.encode())
        os._exit(0)
    os.close(w)
    deadline = time.monotonic() + 30
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung (in its fork hooks)")
        time.sleep(0.01)
    with os.fdopen(r, "rb") as f:
        return f.read().decode()


def test_a_forked_child_starts_without_the_idle_session() -> None:
    s = pickle.loads(_shipped())
    s.run(None, {"x": X})
    del s
    assert len(session_module._idle) == 1

    def child() -> str:
        again = pickle.loads(_shipped())
        want = _shipped.want  # type: ignore[attr-defined]
        msg = f"{len(session_module._idle)} " \
              f"{again.run(None, {'x': X})[0].tobytes() == want.tobytes()} "
        del again
        return msg + f"{len(session_module._idle)}"

    msg = _in_a_fork(child)
    assert msg == "0 True 1", msg  # none inherited; its own kept idle after its task
    assert len(session_module._idle) == 1


def test_a_fork_lets_the_parents_idle_session_go_without_releasing_it() -> None:
    """The idle session is the parent's: a forked child must forget it, not release it (ORT's
    ReleaseSession there waits for the parent's threads: a fork pool's workers hung at start,
    in the fork hooks, once the idle list was emptied, and its session released, before the
    child was a new fork generation). The child lives on and runs a session of its own."""
    with ortc.Session(MODEL, intra_op_num_threads=2) as made:
        blob = pickle.dumps(made)
    for _ in range(5):  # (each fork a new chance for the release to hang)
        s = pickle.loads(blob)
        want = s.run(None, {"x": X})[0]
        del s
        assert len(session_module._idle) == 1

        def child() -> str:
            with ortc.Session(MODEL, intra_op_num_threads=1) as own:
                return f"{len(session_module._idle)} " \
                       f"{own.run(None, {'x': X})[0].tobytes() == want.tobytes()}"

        assert _in_a_fork(child) == "0 True"
