"""The staged fast paths: a stage (small tensors, copied) and a lane (any size, the feeds' own
memory). Same results as the general path, never aliased.

Every test here runs twice: once as the code ships (small tensors staged) and once with the
stage's size limit below every tensor, so that the same runs go through lanes.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import numpy as np
import pytest

import models
import ortc
import ortc._stage
from ortc._stage import STAGE_MAX_MISSES as _STAGE_MAX_MISSES
from ortc._plan import refused_buffer
from ortc._stage import Lane, Stage


@pytest.fixture(autouse=True, params=["stage", "lane"])
def served_by(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> type:
    """The class that serves repeated runs of small tensors in this test."""
    if request.param == "lane":
        monkeypatch.setattr(ortc._stage, "STAGE_MAX_BYTES", -1)
        return Lane
    return Stage


def _ab(n: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"a": rng.standard_normal(n).astype(np.float32),
            "b": rng.standard_normal(n).astype(np.float32)}


def test_repeated_runs_are_staged_and_correct() -> None:
    s = ortc.Session(models.add_model(np.float32, ["n"]))
    results = []
    for seed in range(5):
        feeds = _ab(4, seed)
        [c] = s.run(None, feeds)
        np.testing.assert_array_equal(c, feeds["a"] + feeds["b"])
        results.append(c)
    stages = s._engine.stages.by_thread[threading.get_ident()]
    assert stages[None], "the second run onwards is served by a stage"
    # every call returned its own array: earlier results were not overwritten
    for seed, c in enumerate(results):
        feeds = _ab(4, seed)
        np.testing.assert_array_equal(c, feeds["a"] + feeds["b"])
    assert len({id(c) for c in results}) == 5


def test_input_changes_after_the_call_do_not_leak_into_outputs() -> None:
    s = ortc.Session(models.add_model(np.float32, ["n"]))
    a = np.ones(3, np.float32)
    b = np.ones(3, np.float32)
    s.run(None, {"a": a, "b": b})
    [c] = s.run(None, {"a": a, "b": b})
    a[:] = 100
    assert c.tolist() == [2.0, 2.0, 2.0]


def test_persistent_shape_changes_give_way_to_stages_per_shape_or_an_open_lane(
        served_by: type) -> None:
    """Shapes that keep changing (in turn, or at random among a few) make a stage miss more
    often than it serves: it gives way to a stage per shape (small tensors), a lane to an open
    lane, which derives the output's shape from the feeds' (``n`` here) on every run."""
    from ortc._stage import OpenLane, ShapeStages

    s = ortc.Session(models.add_model(np.float32, ["n"]))
    rng = np.random.default_rng(0)
    results = []
    for k in range(3 * _STAGE_MAX_MISSES + 20):
        n = int(rng.integers(1, 5)) if k % 2 else 2 + k % 3  # a few sizes, in turn and at random
        feeds = _ab(n, k)
        [c] = s.run(None, feeds)
        np.testing.assert_array_equal(c, feeds["a"] + feeds["b"])
        results.append((feeds, c))
    lane = s._engine.stages.by_thread[threading.get_ident()][None]
    assert type(lane) is (ShapeStages if served_by is Stage else OpenLane)
    for feeds, c in results:  # every result its own array, never written by a later run
        np.testing.assert_array_equal(c, feeds["a"] + feeds["b"])
    assert lane.misses <= 4  # a shape's first run (the general path) is one, hits pay back
    if served_by is Stage:
        assert set(lane.by_shape) == {((n,), (n,)) for n in range(1, 5)}


def test_shapes_new_every_run_end_in_an_open_lane(served_by: type) -> None:
    """Past the few dozen shapes a stage per shape is for, new shapes every run (each would
    make a stage only to drop it) give way to an open lane."""
    from ortc._stage import SHAPE_STAGES_MAX, OpenLane

    s = ortc.Session(models.add_model(np.float32, ["n"]))
    for n in range(1, SHAPE_STAGES_MAX + 3 * _STAGE_MAX_MISSES):
        feeds = _ab(n, n)
        np.testing.assert_array_equal(s.run(None, feeds)[0], feeds["a"] + feeds["b"])
    assert type(s._engine.stages.by_thread[threading.get_ident()][None]) is OpenLane


def test_int64_outputs_fed_back_are_served_like_fresh_arrays(served_by: type) -> None:
    """int64 outputs are numpy's C long long (as onnxruntime makes them), arrays made by the
    caller C long: equal dtypes, other objects. Outputs fed back (token ids, a counter) must
    find the same stage, lane and open lane as the caller's own arrays, not the general path."""
    from ortc._stage import SHAPE_STAGES_MAX, OpenLane

    s = ortc.Session(models.add_model(np.int64, ["n"]))
    a = np.arange(3)
    c = a
    for _ in range(6):
        c = s.run(None, {"a": c, "b": a})[0]
    assert c.dtype.char == np.dtype(np.longlong).char
    np.testing.assert_array_equal(c, 7 * a)
    assert type(s._engine.stages.by_thread[threading.get_ident()][None]) is served_by
    t = ortc.Session(models.add_model(np.int64, ["n"]))
    for n in range(1, SHAPE_STAGES_MAX + 3 * _STAGE_MAX_MISSES):
        fed = t.run(None, {"a": np.arange(n), "b": np.ones(n, np.int64)})[0]
        got = t.run(None, {"a": fed, "b": fed})[0]
        np.testing.assert_array_equal(got, 2 * (np.arange(n) + 1))
    assert type(t._engine.stages.by_thread[threading.get_ident()][None]) is OpenLane


def test_persistent_shape_changes_without_derivable_output_shapes_stop_staging() -> None:
    """An output whose shape the model leaves open is preallocated only for the input shapes
    it was learned for: when those keep changing there is no open lane to give way to."""
    from ortc._plan import LEARN_AFTER

    s = ortc.Session(_open_output_model("Reshape"))
    shape = np.array([2, -1], np.int64)
    for _ in range(LEARN_AFTER + 2):  # learned, then a stage
        s.run(None, {"x": np.arange(6, dtype=np.float32), "shape": shape})
    assert s._engine.stages.by_thread[threading.get_ident()][None]
    from ortc._stage import SHAPE_STAGES_MAX

    for k in range(SHAPE_STAGES_MAX + 2 * _STAGE_MAX_MISSES):  # past a stage per shape too
        x = np.arange(2 * (k % 2 + 1), dtype=np.float32)  # never the 6 it was staged for
        [y] = s.run(None, {"x": x, "shape": shape})
        np.testing.assert_array_equal(y, x.reshape(2, -1))
    assert s._engine.stages.by_thread[threading.get_ident()][None] is False


def test_a_stage_that_mostly_serves_is_kept_when_another_shape_comes_now_and_then(
        served_by: type) -> None:
    s = ortc.Session(models.add_model(np.float32, ["n"]))
    for k in range(200):
        n = 5 if k % 10 == 9 else 3  # one run in ten of another shape
        feeds = _ab(n, k)
        np.testing.assert_array_equal(s.run(None, feeds)[0], feeds["a"] + feeds["b"])
    assert type(s._engine.stages.by_thread[threading.get_ident()][None]) is served_by


def test_other_feed_kinds_take_the_general_path() -> None:
    s = ortc.Session(models.add_model(np.float32, ["n"]))
    s.run(None, _ab(3, 0))
    s.run(None, _ab(3, 1))
    # a Value, a list, a float64 array that is refused, a non-contiguous view
    v = ortc.Value.from_numpy(np.ones(3, np.float32))
    assert s.run(None, {"a": v, "b": np.ones(3, np.float32)})[0].tolist() == [2, 2, 2]
    assert s.run(None, {"a": [1.0, 2.0, 3.0], "b": np.ones(3, np.float32)})[0].tolist() == \
        [2, 3, 4]
    strided = np.arange(6, dtype=np.float32)[::2]
    assert s.run(None, {"a": strided, "b": np.zeros(3, np.float32)})[0].tolist() == [0, 2, 4]
    try:
        s.run(None, {"a": np.ones(3), "b": np.ones(3, np.float32)})
    except ortc.InvalidArgument:
        pass
    else:
        raise AssertionError("a float64 feed for a float input must be refused")


def test_each_thread_has_its_own_stage_and_results_match() -> None:
    s = ortc.Session(models.mlp_model(2, 8, "batch"), intra_op_num_threads=1)
    x = {i: np.random.default_rng(i).standard_normal((2, 8)).astype(np.float32)
         for i in range(4)}
    expected = {i: ortc.Session(models.mlp_model(2, 8, "batch")).run(None, {"x": x[i]})[0]
                for i in range(4)}
    errors: list[str] = []

    def work(i: int) -> None:
        for _ in range(200):
            [y] = s.run(None, {"x": x[i]})
            if not np.array_equal(y, expected[i]):
                errors.append(f"thread {i}: wrong result")
                return

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert s._engine.stages.by_thread  # one per live thread (an ended thread's id may be reused)


def test_errors_in_a_staged_run_and_terminate() -> None:
    s = ortc.Session(models.add_model(np.float32, ["n"]))
    s.run(None, _ab(2, 0))
    s.run(None, _ab(2, 1))
    ro = ortc.RunOptions()
    ro.terminate()
    try:
        s.run(None, _ab(2, 2), ro)
    except ortc.Fail as e:
        assert "terminate" in str(e)
    else:
        raise AssertionError("a terminated RunOptions must stop a staged run too")
    ro.unset_terminate()
    feeds = _ab(2, 3)
    np.testing.assert_array_equal(s.run(None, feeds, ro)[0], feeds["a"] + feeds["b"])


def test_close_drops_the_stages() -> None:
    import gc

    s = ortc.Session(models.add_model(np.float32, ["n"]))
    s.run(None, _ab(2, 0))
    s.run(None, _ab(2, 1))
    s.close()
    gc.collect()
    assert s._engine.stages.by_thread == {}


def test_second_runs_agree_with_first_runs_over_the_zoo() -> None:
    # the first run takes the general path (checked against onnxruntime by test_agreement),
    # the second a stage where the case qualifies: they must be bit-identical
    staged = 0
    for case in models.zoo_cases() + models.identity_cases():
        if any(k in case.name for k in ("Random", "Bernoulli", "Multinomial")):
            continue  # a fresh draw per run
        s = ortc.Session(case.model, intra_op_num_threads=1)
        first = s.run(None, case.feeds)
        second = s.run(None, case.feeds)
        third = s.run(None, case.feeds)
        stages = s._engine.stages.by_thread.get(threading.get_ident(), {})
        staged += bool(stages.get(None))
        for a, b, c in zip(first, second, third):
            if isinstance(a, np.ndarray):
                assert a.dtype == b.dtype == c.dtype and a.shape == b.shape == c.shape, case.name
                if a.dtype == object:
                    assert a.tolist() == b.tolist() == c.tolist(), case.name
                else:
                    raw = [np.ascontiguousarray(x).reshape(-1).view(np.uint8) for x in (a, b, c)]
                    assert np.array_equal(raw[0], raw[1]) and np.array_equal(raw[0], raw[2]), \
                        case.name
            else:
                assert repr(a) == repr(b) == repr(c), case.name
    assert staged > 100, staged


def test_fortran_ordered_feeds_are_staged_in_c_order() -> None:
    s = ortc.Session(models.add_model(np.float32, [2, 3]))
    a = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    for _ in range(3):
        [c] = s.run(None, {"a": a, "b": a})
        np.testing.assert_array_equal(c, a * 2)


# -- outputs the model leaves without a shape: learned, then preallocated and staged ----------

def _open_output_model(op: str) -> bytes:
    """``y`` of a shape nobody can tell before a run: ``Reshape(x, shape)`` with ``shape`` an
    input (the caller usually feeds the same one) or ``NonZero(x)`` (it depends on x's values).
    """
    from onnx import TensorProto, helper

    if op == "Reshape":
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"]),
                  helper.make_tensor_value_info("shape", TensorProto.INT64, [2])]
        node = helper.make_node("Reshape", ["x", "shape"], ["y"])
        out_type = TensorProto.FLOAT
    else:
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])]
        node = helper.make_node("NonZero", ["x"], ["y"])
        out_type = TensorProto.INT64
    return models._bytes(models.make_model(
        [node], inputs, [helper.make_tensor_value_info("y", out_type, None)], []))


def test_an_open_output_shape_is_learned_then_preallocated_and_staged() -> None:
    from ortc._plan import LEARN_AFTER

    s = ortc.Session(_open_output_model("Reshape"))
    plan = s._engine.plan(None)[1]
    assert plan.preallocate == [] and plan.learned is None  # nothing known before a run
    rng = np.random.default_rng(0)
    shape = np.array([2, 3], np.int64)
    results = []
    for k in range(LEARN_AFTER + 4):
        x = rng.standard_normal(6).astype(np.float32)
        [y] = s.run(None, {"x": x, "shape": shape})
        np.testing.assert_array_equal(y, x.reshape(2, 3))
        results.append((x, y))
    assert plan.learned is not None and plan.learned[1][0][3] == (2, 3)
    assert s._engine.stages.by_thread[threading.get_ident()][None], "later runs are staged"
    for x, y in results:  # no result was overwritten by a later run
        np.testing.assert_array_equal(y, x.reshape(2, 3))
    # the same input shapes with another shape *value*: refused once, then right every time
    for dims in ([3, 2], [3, 2], [1, 6], [2, 3]):
        x = rng.standard_normal(6).astype(np.float32)
        [y] = s.run(None, {"x": x, "shape": np.array(dims, np.int64)})
        np.testing.assert_array_equal(y, x.reshape(dims))
    assert plan.seen is False and plan.learned is None


def test_a_value_dependent_open_shape_is_refused_once_then_never_guessed() -> None:
    """NonZero's output shape depends on the values: the same count a few runs in a row makes
    the plan learn it; a different count makes ORT refuse the buffer (on the general path and on
    a stage alike); every run still returns the right result and guessing stops."""
    s = ortc.Session(_open_output_model("NonZero"))
    plan = s._engine.plan(None)[1]
    patterns = [[1, 0, 2, 0]] * 6 + [[1, 1, 1, 0]] + [[0, 0, 0, 3]] * 4 + [[5, 5, 0, 5]]
    for values in patterns:
        x = np.array(values, np.float32)
        [y] = s.run(None, {"x": x})
        np.testing.assert_array_equal(y, np.array(np.nonzero(x), np.int64))
    assert plan.seen is False and plan.learned is None
    # with staging off, the general path meets the refusal itself
    t = ortc.Session(_open_output_model("NonZero"))
    t._engine.stages.active = False
    for values in patterns:
        x = np.array(values, np.float32)
        np.testing.assert_array_equal(t.run(None, {"x": x})[0], np.array(np.nonzero(x), np.int64))
    assert t._engine.plan(None)[1].seen is False


def _misdeclared_model() -> bytes:
    """``y = Reshape(x, shape)`` declared rank 2 (``["a", "b"]``), while the caller's ``shape``
    makes it rank 3: ORT runs it (it checks only buffers a caller hands it against the
    declaration), as real models with a wrong declared output shape run (one of the apps)."""
    from onnx import TensorProto, helper

    return models._bytes(models.make_model(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [None])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b"])], []))


def test_an_output_whose_declared_shape_is_wrong_is_never_guessed() -> None:
    s = ortc.Session(_misdeclared_model())
    shape = np.array([2, 3, 1], np.int64)
    for k in range(8):
        x = np.arange(6, dtype=np.float32) + k
        [y] = s.run(None, {"x": x, "shape": shape})
        np.testing.assert_array_equal(y, x.reshape(2, 3, 1))
    plan = s._engine.plan(None)[1]
    assert plan.seen is False and plan.learned is None


def test_a_guess_ort_refuses_before_the_run_is_dropped_and_the_run_made_again() -> None:
    """The safety net under the check above: whatever ORT's wording for a refused buffer (here
    its check of the caller's buffers against the declared rank), the run is made again
    without the guess and returns the right result."""
    s = ortc.Session(_misdeclared_model())
    s._engine.stages.active = False
    x = np.arange(6, dtype=np.float32)
    shape = np.array([2, 3, 1], np.int64)
    s.run(None, {"x": x, "shape": shape})
    plan = s._engine.plan(None)[1]
    plan.seen = None  # as if learning had gone on, with a guess ORT will refuse
    plan.learned = ({"x": (6,), "shape": (3,)}, [(0, np.dtype(np.float32), 1, (2, 3, 1))])
    [y] = s.run(None, {"x": x, "shape": shape})
    np.testing.assert_array_equal(y, x.reshape(2, 3, 1))
    assert plan.learned is None and plan.seen is False


def test_a_failed_guessed_run_that_fails_again_unguessed_keeps_the_learned_shapes() -> None:
    """Bad feeds that ORT refuses (a reshape to a size the data does not have) fail a guessed
    run for a reason of their own: the error reaches the caller, and the shapes learned for
    good feeds are kept."""
    from ortc._plan import LEARN_AFTER

    s = ortc.Session(_open_output_model("Reshape"))
    s._engine.stages.active = False  # the general path's retry is what is tested
    x = np.arange(6, dtype=np.float32)
    for _ in range(LEARN_AFTER + 1):
        s.run(None, {"x": x, "shape": np.array([2, 3], np.int64)})
    plan = s._engine.plan(None)[1]
    assert plan.learned is not None
    with pytest.raises(ortc.OrtError, match="cannot be reshaped"):
        s.run(None, {"x": x, "shape": np.array([4, 4], np.int64)})
    assert plan.learned is not None and plan.seen is not False
    np.testing.assert_array_equal(s.run(None, {"x": x, "shape": np.array([2, 3], np.int64)})[0],
                                  x.reshape(2, 3))
    # an INVALID_ARGUMENT on a guessed run is retried without the guess; failing again, it was
    # not the guess's fault: the error is raised and the learned shapes stay
    engine = s._engine
    calls: list[int] = []

    def refusing(*args: object) -> object:
        calls.append(1)
        return engine.api.CreateStatus(2, b"refused feed")

    engine.call = refusing  # type: ignore[method-assign]
    try:
        with pytest.raises(ortc.InvalidArgument, match="refused feed"):
            s.run(None, {"x": x, "shape": np.array([2, 3], np.int64)})
    finally:
        del engine.call
    assert len(calls) == 2 and plan.learned is not None and plan.seen is not False


# -- ORT's messages about a guess it refused ---------------------------------------------------
# ORT logs a refused buffer at ERROR; when ortc then makes the run again, that was ortc's own
# attempt, not the caller's failure: the message comes at DEBUG with ortc_retried set.

def _ort_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "ortc.ort"]


def _zoo_case(name: str) -> models.Case:
    return next(c for c in models.zoo_cases() if c.name == name)


def _wrongly_declared() -> tuple[bytes, dict[str, np.ndarray]]:
    """A model whose y is declared [2, 3] (a shape ORT cannot check at load: it comes from the
    input "to") and made [3, 2]: ORT refuses a buffer of the declared shape."""
    from onnx import helper

    model = models.make_model([helper.make_node("Reshape", ["x", "to"], ["y"])],
                              [models._vi("x", models.T.FLOAT, [6]),
                               models._vi("to", models.T.INT64, [2])],
                              [models._vi("y", models.T.FLOAT, [2, 3])],
                              check=False).SerializeToString()
    return model, {"x": np.arange(6, dtype=np.float32), "to": np.array([3, 2], np.int64)}


def test_a_wrongly_declared_output_refused_on_the_first_run_logs_no_error(caplog) -> None:
    model, feeds = _wrongly_declared()
    s = ortc.Session(model)
    with caplog.at_level(logging.DEBUG, logger="ortc.ort"):
        first = s.run(None, feeds)
        second = s.run(None, feeds)
    assert first[0].shape == second[0].shape == (3, 2)
    np.testing.assert_array_equal(first[0], second[0])
    records = _ort_records(caplog)
    assert not [r for r in records if r.levelno >= logging.ERROR], records
    # what ORT says of every run of this model, as under onnxruntime
    assert all("does not match actual shape" in r.getMessage() for r in records
               if r.levelno == logging.WARNING), records
    refused = [r for r in records if getattr(r, "ortc_retried", False)]
    assert refused and all(r.levelno == logging.DEBUG and r.ort_severity == 3 for r in refused)
    assert "shape" in refused[0].getMessage()


def test_value_dependent_refusals_log_no_error_on_either_path(caplog) -> None:
    patterns = [[1, 0, 2, 0]] * 6 + [[1, 1, 1, 0]] + [[0, 0, 0, 3]] * 4 + [[5, 5, 0, 5]]
    for staged in (True, False):
        s = ortc.Session(_open_output_model("NonZero"))
        s._engine.stages.active = staged
        with caplog.at_level(logging.DEBUG, logger="ortc.ort"):
            for values in patterns:
                x = np.array(values, np.float32)
                np.testing.assert_array_equal(s.run(None, {"x": x})[0],
                                              np.array(np.nonzero(x), np.int64))
        records = _ort_records(caplog)
        assert not [r for r in records if r.levelno >= logging.WARNING], (staged, records)
        assert [r for r in records if getattr(r, "ortc_retried", False)], staged
        caplog.clear()


def test_a_guessed_run_that_fails_for_its_feeds_logs_the_error(caplog) -> None:
    """A guessed run that fails for the feeds' own reason (a reshape the data does not fit, not
    a refused buffer): its held message comes out at ERROR, as it was, and the caller gets the
    error; nothing is marked retried."""
    from ortc._plan import LEARN_AFTER

    s = ortc.Session(_open_output_model("Reshape"))
    s._engine.stages.active = False
    x = np.arange(6, dtype=np.float32)
    for _ in range(LEARN_AFTER + 1):
        s.run(None, {"x": x, "shape": np.array([2, 3], np.int64)})
    assert s._engine.plan(None)[1].learned is not None
    with caplog.at_level(logging.DEBUG, logger="ortc.ort"):
        with pytest.raises(ortc.OrtError, match="cannot be reshaped"):
            s.run(None, {"x": x, "shape": np.array([4, 4], np.int64)})
    records = _ort_records(caplog)
    errors = [r for r in records if r.levelno >= logging.ERROR]
    retried = [r for r in records if getattr(r, "ortc_retried", False)]
    assert len(errors) == 1 and "reshaped" in errors[0].getMessage(), records
    assert not retried and errors[0].ortc_retried is False, records


def test_a_refused_first_run_prints_nothing_when_logging_is_not_configured() -> None:
    """What a user sees: ORT's binding prints nothing for such a model, nor does ortc."""
    from conftest import run_python

    proc = run_python(
        "import numpy as np, ortc, models\n"
        "case = next(c for c in models.zoo_cases() if c.name == 'SVMRegressor')\n"
        "s = ortc.Session(case.model)\n"
        "print(s.run(None, case.feeds)[0].shape, s.run(None, case.feeds)[0].shape)\n")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["(4,", "1)", "(4,", "1)"], proc.stdout
    assert proc.stderr == "", proc.stderr[-2000:]


def test_a_guessed_run_holds_only_its_error_messages() -> None:
    """Only the ERROR a guessed run logs waits for the run to end: ORT's other messages reach
    the handlers while the run is still inside ORT (a handler watching a long first run sees
    them, and a process that dies mid-run has already logged them)."""
    from ortc._loader import api

    model, feeds = _wrongly_declared()
    in_run: list[int] = [0]  # while inside Run: which call (the guessed one is the first)
    calls: list[int] = [0]
    seen: list[tuple[int, int]] = []

    class Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append((record.ort_severity, in_run[0]))  # type: ignore[attr-defined]

    def flagged(_name: str, run: Any) -> Any:
        def call(*args: Any) -> Any:
            calls[0] += 1
            in_run[0] = calls[0]
            try:
                return run(*args)
            finally:
                in_run[0] = 0
        return call

    env = ortc.get_env()
    logger = logging.getLogger("ortc.ort")
    handler, old_severity, old_level = Handler(), env.log_severity_level, logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    env.log_severity_level = ortc.LoggingLevel.VERBOSE
    undo = api().instrument(flagged, ["Run"])
    try:
        s = ortc.Session(model)  # made at VERBOSE: its runs log at VERBOSE too
        assert s.run(None, feeds)[0].shape == (3, 2)
    finally:
        undo()
        env.log_severity_level = old_severity
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    assert calls[0] == 2, calls  # the guessed run, refused, and the run made again
    errors = [run for severity, run in seen if severity == 3]
    assert errors and not any(errors), seen  # the refusal: held until Run had returned
    # ORT's VERBOSE/INFO lines of the guessed run: passed on while it was inside ORT
    assert [severity for severity, run in seen if run == 1], seen


# -- lanes: repeated runs on tensors too large to copy -------------------------------------------

def _big(seed: int, n: int = 64 * 1024) -> dict[str, np.ndarray]:
    return _ab(n, seed)  # 256 KiB a feed: above the stage's limit


def test_which_class_serves_follows_the_size(served_by: type) -> None:
    s = ortc.Session(models.add_model(np.float32, ["n"]))
    for _ in range(2):
        s.run(None, _ab(4, 0))
    assert type(s._engine.stages.by_thread[threading.get_ident()][None]) is served_by
    t = ortc.Session(models.add_model(np.float32, ["n"]))
    for _ in range(2):
        t.run(None, _big(0))
    assert type(t._engine.stages.by_thread[threading.get_ident()][None]) is Lane


@pytest.mark.parametrize("feeds", [_ab(4, 0), _big(0)], ids=["small", "large"])
def test_a_session_run_once_makes_no_stage(feeds: dict[str, Any]) -> None:
    """A session run once (a command line tool, a cold start) pays for no stage or lane: the
    second run with the same feeds sets one up (tests above)."""
    s = ortc.Session(models.add_model(np.float32, ["n"]))
    expected = feeds["a"] + feeds["b"]
    np.testing.assert_array_equal(s.run(None, feeds)[0], expected)
    assert not s._engine.stages.by_thread.get(threading.get_ident())
    np.testing.assert_array_equal(s.run(None, feeds)[0], expected)
    assert s._engine.stages.by_thread[threading.get_ident()][None]
    np.testing.assert_array_equal(s.run(None, feeds)[0], expected)


def test_a_lane_runs_on_the_feeds_memory_and_returns_new_arrays_each_run() -> None:
    from ortc._loader import api

    calls: list[str] = []

    def counting(name: str, fn: Any) -> Any:
        def call(*args: Any) -> Any:
            calls.append(name)
            return fn(*args)
        return call

    undo = api().instrument(counting, ["Run", "CreateTensorWithDataAsOrtValue", "ReleaseValue"])
    try:
        s = ortc.Session(models.add_model(np.float32, ["n"]))
        for _ in range(2):
            s.run(None, _big(0))
        lane = s._engine.stages.by_thread[threading.get_ident()][None]
        assert type(lane) is Lane
        pool = [_big(seed) for seed in range(3)]
        results = [s.run(None, pool[k % 3])[0] for k in range(12)]
        del calls[:]
        again = [s.run(None, pool[k % 3])[0] for k in range(6)]
    finally:
        undo()
    # the pool's inputs come from the value cache (made in the first round); each output is a
    # new array the caller keeps, so its value is new too: nothing else but Run
    assert calls.count("Run") == 6 and calls.count("CreateTensorWithDataAsOrtValue") <= 6, calls
    assert "ReleaseValue" not in calls, calls
    for k, c in enumerate(results + again):  # no later run wrote into an earlier result
        np.testing.assert_array_equal(c, pool[k % 3]["a"] + pool[k % 3]["b"])
    assert len({id(c) for c in results + again}) == 18
    assert s._engine.stages.by_thread[threading.get_ident()][None] is lane


def test_a_lane_leaves_feeds_it_cannot_pass_as_they_are_to_the_general_path() -> None:
    s = ortc.Session(models.add_model(np.float32, ["n"]))
    feeds = _big(0)
    s.run(None, feeds)
    n = feeds["a"].size
    strided = np.arange(2 * n, dtype=np.float32)[::2]  # not contiguous: no lane may take it
    other = _big(1, n // 2)                           # another shape
    read_only = _big(2)
    for arr in read_only.values():
        arr.flags.writeable = False                   # ORT only reads inputs: taken as is
    for f in ({"a": strided, "b": feeds["b"]}, other, read_only, feeds,
              {"a": feeds["a"].astype(np.float64), "b": feeds["b"]}):
        try:
            [c] = s.run(None, f)
        except ortc.InvalidArgument:
            assert f["a"].dtype == np.float64
            continue
        np.testing.assert_array_equal(c, f["a"] + f["b"])


def test_fortran_ordered_large_feeds_are_never_given_a_lane() -> None:
    s = ortc.Session(models.add_model(np.float32, [256, 256]))
    a = np.asfortranarray(np.arange(256 * 256, dtype=np.float32).reshape(256, 256))
    for _ in range(3):
        [c] = s.run(None, {"a": a, "b": a})
        np.testing.assert_array_equal(c, a * 2)
    assert not s._engine.stages.by_thread.get(threading.get_ident(), {}).get(None)


def test_the_value_cache_finds_a_buffer_by_its_address() -> None:
    """The value cache looks a key up with ``ffi.from_buffer``'s cdata and stores it with a
    plain pointer (RunEngine.new_cached_value): cffi must compare and hash both by address, and the
    stored key must not keep the array alive."""
    import sys

    from ortc._ffi import ffi

    arr = np.ones(8, np.float32)
    buf = ffi.from_buffer(arr)
    stored = ffi.cast("char*", buf)
    assert stored == buf and hash(stored) == hash(buf)
    assert {(stored, (8,), 1): "owner"}.get((ffi.from_buffer(arr), (8,), 1)) == "owner"
    assert ffi.from_buffer(arr[1:]) != stored
    refs = sys.getrefcount(arr)
    del buf
    assert sys.getrefcount(arr) == refs - 1  # only the buffer cdata held the array


def test_an_error_in_a_served_run_is_raised_and_the_next_run_is_right() -> None:
    """ORT fails a run for the feeds' values (an index out of range) after earlier runs with the
    same shapes made a stage or a lane: the error reaches the caller, nothing is retried, and
    the next good run is right."""
    from onnx import TensorProto, helper

    model = models._bytes(models.make_model(
        [helper.make_node("Gather", ["data", "idx"], ["y"])],
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("idx", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], []))
    s = ortc.Session(model)
    data = np.arange(4, dtype=np.float32)
    for _ in range(3):
        assert s.run(None, {"data": data, "idx": np.array([3, 0], np.int64)})[0].tolist() == [3, 0]
    assert s._engine.stages.by_thread[threading.get_ident()][None]
    with pytest.raises(ortc.OrtError, match="out of bounds|out of range|idx"):
        s.run(None, {"data": data, "idx": np.array([7, 0], np.int64)})
    assert s.run(None, {"data": data, "idx": np.array([1, 2], np.int64)})[0].tolist() == [1, 2]


# -- open lanes: shapes that change from run to run ----------------------------------------------

def _broadcast_add_model() -> bytes:
    """``y = a + b`` with ``a`` [n], ``b`` [m], ``y`` declared [n]: right while m is n or 1,
    wrong (ORT makes [m]) when n is 1 and m is not."""
    from onnx import TensorProto, helper

    return models._bytes(models.make_model(
        [helper.make_node("Add", ["a", "b"], ["y"])],
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n"]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, ["m"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])], []))


def test_an_open_lane_whose_derived_shape_ort_refuses_gives_way_for_good(
        caplog: pytest.LogCaptureFixture) -> None:
    from ortc._stage import OpenLane

    s = ortc.Session(_broadcast_add_model())
    rng = np.random.default_rng(0)

    def feeds(n: int, m: int) -> dict[str, np.ndarray]:
        return {"a": rng.standard_normal(n).astype(np.float32),
                "b": rng.standard_normal(m).astype(np.float32)}

    big = 5000  # above the stage's limit: lanes, then an open lane
    for k in range(3 * _STAGE_MAX_MISSES):
        n = big + k % 4
        f = feeds(n, n if k % 3 else 1)
        np.testing.assert_array_equal(s.run(None, f)[0], f["a"] + f["b"])
    stages = s._engine.stages.by_thread[threading.get_ident()]
    assert type(stages[None]) is OpenLane
    with caplog.at_level(logging.DEBUG, logger="ortc.ort"):
        f = feeds(1, big)  # the declared [n] is [1]; ORT makes [big] and refuses the buffer
        [y] = s.run(None, f)
    assert y.shape == (big,)
    np.testing.assert_array_equal(y, f["a"] + f["b"])
    assert stages[None] is False  # the lane gave way, for good
    # ORT's message about the refused buffer, once (the general path, which used to meet this
    # refusal itself, logged it the same way); no preallocation, and no message, after it
    errors = [r for r in _ort_records(caplog) if r.levelno >= logging.WARNING]
    assert len(errors) == 1 and refused_buffer(errors[0].getMessage()), errors
    assert s._engine.preallocate is False  # as when the general path meets a wrong declaration
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="ortc.ort"):
        for n in (big, 1, big + 1):
            f = feeds(n, big + 2 if n == 1 else n)
            np.testing.assert_array_equal(s.run(None, f)[0], f["a"] + f["b"])
    assert not [r for r in _ort_records(caplog) if r.levelno >= logging.WARNING]


def test_changing_shapes_on_threads_of_their_own_give_each_run_its_own_result(
        served_by: type) -> None:
    from ortc._stage import OpenLane, ShapeStages

    s = ortc.Session(models.add_model(np.float32, ["n"]), intra_op_num_threads=1)
    errors: list[str] = []
    kinds: list[type] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for k in range(400):
            n = int(rng.integers(1, 40))
            f = {"a": rng.standard_normal(n).astype(np.float32),
                 "b": np.full(n, seed, np.float32)}
            [c] = s.run(None, f)
            if c.shape != (n,) or not np.array_equal(c, f["a"] + f["b"]):
                errors.append(f"thread {seed}, run {k}: wrong result")
                return
        kinds.append(type(s._engine.stages.by_thread[threading.get_ident()][None]))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert kinds == [ShapeStages if served_by is Stage else OpenLane] * 4


@pytest.mark.parametrize("kind", ["Stage", "Lane", "OpenLane", "ShapeStages"])
def test_a_run_started_just_before_a_served_runs_c_call_takes_the_general_path(
        kind: str) -> None:
    """What a signal handler's run does when it lands after a stage or lane has filled its C
    arrays and before Run: it must not take the same stage or lane (whose arrays it would
    overwrite), so the interrupted run still computes its own feeds. Driven without a signal:
    the served object's Run is wrapped to make the nested run first."""
    s = ortc.Session(models.add_model(np.float32, ["n"]))
    n = 4 if kind in ("Stage", "ShapeStages") else 8192
    sizes = [n] * 4 if kind in ("Stage", "Lane") else [n, n + 8, n + 16]
    for k in range(4 * _STAGE_MAX_MISSES):
        m = sizes[k % len(sizes)]
        s.run(None, {"a": np.ones(m, np.float32), "b": np.ones(m, np.float32)})
    served = s._engine.stages.by_thread[threading.get_ident()][None]
    if ortc._stage.STAGE_MAX_BYTES < 0:  # this test's lane variant: nothing is small enough
        kind = {"Stage": "Lane", "ShapeStages": "OpenLane"}.get(kind, kind)
    assert type(served).__name__ == kind
    if kind == "ShapeStages":
        served = served.by_shape[((n,), (n,))]
    real = served.run_c
    nested: list[np.ndarray] = []

    def run_c(*args: Any) -> Any:
        if not nested:
            nested.append(s.run(None, {"a": np.full(n, 7, np.float32),
                                       "b": np.full(n, 1, np.float32)})[0])
        return real(*args)

    served.run_c = run_c
    [c] = s.run(None, {"a": np.full(n, 2, np.float32), "b": np.full(n, 3, np.float32)})
    assert nested and np.all(nested[0] == 8)
    assert np.all(c == 5), "the nested run overwrote the served run's inputs"


def test_feeds_a_stage_per_shape_cannot_key_get_the_general_paths_answer(
        served_by: type) -> None:
    """A feed whose ``shape`` cannot be read (a closed Value, an object whose property raises)
    while stages per shape serve: the general path answers, as it would without them."""
    from ortc._stage import ShapeStages

    s = ortc.Session(models.add_model(np.float32, ["n"]))
    for k in range(3 * _STAGE_MAX_MISSES):
        feeds = _ab(1 + k % 3, k)
        np.testing.assert_array_equal(s.run(None, feeds)[0], feeds["a"] + feeds["b"])
    served = s._engine.stages.by_thread[threading.get_ident()][None]
    if served_by is Stage:
        assert type(served) is ShapeStages
    closed = ortc.Value.from_numpy(np.ones(2, np.float32))
    closed.close()
    with pytest.raises(ortc.ClosedError):
        s.run(None, {"a": closed, "b": np.ones(2, np.float32)})

    class Odd:
        @property
        def shape(self) -> tuple[int, ...]:
            raise RuntimeError("no shape here")

    with pytest.raises(ortc.InvalidArgument):
        s.run(None, {"a": Odd(), "b": np.ones(2, np.float32)})
    feeds = _ab(2, 99)
    np.testing.assert_array_equal(s.run(None, feeds)[0], feeds["a"] + feeds["b"])


def _other_feeds() -> dict[str, Any]:
    """Valid feeds of three float32 elements that are not plain float32 ndarrays, as users bring
    them: each runs through the general path (1, 2, 3 each)."""
    import array
    import ctypes

    class Sub(np.ndarray):
        pass

    values = [1.0, 2.0, 3.0]
    strided = np.array([1, 0, 2, 0, 3, 0], np.float32)[::2]
    readonly = np.array(values, np.float32)
    readonly.flags.writeable = False
    return {
        "list": values,
        "tuple": tuple(values),
        "array.array": array.array("f", values),
        "memoryview": memoryview(array.array("f", values)),
        "ctypes": (ctypes.c_float * 3)(*values),
        "ndarray subclass": np.array(values, np.float32).view(Sub),
        "strided view": strided,
        "read-only": readonly,
        "Value": ortc.Value.from_numpy(np.array(values, np.float32)),
    }


@pytest.mark.parametrize("dims,state", [
    ([3], "fresh"), ([3], "served"),
    (["n"], "fresh"), (["n"], "served"), (["n"], "shapes changing")])
@pytest.mark.parametrize("kind", list(_other_feeds()))
def test_other_feed_kinds_give_the_right_answer_in_every_state_of_the_served_paths(
        dims: list[Any], state: str, kind: str) -> None:
    """Feeds of other kinds, given again and again (now and then a plain array between them),
    whatever serves the session's runs so far (nothing yet; a stage or lane; stages per shape
    or an open lane, after shapes kept changing), on a model with a fixed and one with a
    symbolic dimension: every run answers right. Found from outside: once the misses of a list
    feed had replaced a session's stage by stages per shape, the list's run succeeded and then
    raised AttributeError while the session looked for a stage to learn from it
    (``Stages.offer`` read the feeds' ``.shape``)."""
    s = ortc.Session(models.add_model(np.float32, dims))
    changing = state == "shapes changing"
    warm = {"fresh": 0, "served": 3, "shapes changing": 3 * _STAGE_MAX_MISSES}[state]
    for k in range(warm):
        feeds = _ab(1 + k % 3 if changing else 3, k)
        np.testing.assert_array_equal(s.run(None, feeds)[0], feeds["a"] + feeds["b"])
    other = _other_feeds()[kind]
    for k in range(3 * _STAGE_MAX_MISSES):
        b = np.full(3, k, np.float32)
        [c] = s.run(None, {"a": other, "b": b})
        assert c.tolist() == [1 + k, 2 + k, 3 + k], (kind, state, k)
        if k % 4 == 3:  # a plain array now and then (of another shape, when shapes change)
            feeds = _ab(1 + k % 2 if changing else 3, k)
            np.testing.assert_array_equal(s.run(None, feeds)[0], feeds["a"] + feeds["b"])


# -- outputs of one element, which ORT may give another shape than their buffer's -------------
# ORT refuses a preallocated buffer of another shape than the result's, except where both hold
# one element and either is a scalar: it writes the result and gives the value the result's
# shape in place. The general path reads such outputs' shapes back after every run; stages and
# lanes do where the model's ranks may follow the input values (ortc._model_proto).

def _one_element_model(y_shape: Any, op: str) -> bytes:
    """``y`` of one element whose shape is not the declared ``y_shape``: ``Unsqueeze`` of a
    scalar (a [1]), ``Squeeze`` of x declared ``["n"]`` (a scalar when n is 1), or
    ``SequenceAt(i)`` of ``[x, Unsqueeze(x)]`` with x a scalar (a scalar or a [1], by the
    value of i; x declared without a shape, else ORT reports the first item's for y)."""
    from onnx import TensorProto, helper, numpy_helper

    x_shape: Any = {"Squeeze": ["n"], "Unsqueeze": []}.get(op)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
    axes = [numpy_helper.from_array(np.array([0], np.int64), "axes")]
    if op == "Unsqueeze":
        nodes = [helper.make_node("Unsqueeze", ["x", "axes"], ["y"])]
    elif op == "Squeeze":
        nodes = [helper.make_node("Squeeze", ["x"], ["y"])]
        axes = []
    else:
        inputs.append(helper.make_tensor_value_info("i", TensorProto.INT64, []))
        nodes = [helper.make_node("Unsqueeze", ["x", "axes"], ["x1"]),
                 helper.make_node("SequenceConstruct", ["x", "x1"], ["seq"]),
                 helper.make_node("SequenceAt", ["seq", "i"], ["y"])]
    return models._bytes(models.make_model(
        nodes, inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], axes,
        check=False))


def test_a_value_ort_reshaped_is_never_fed_at_its_old_address_and_shape() -> None:
    """A scalar declared and a [1] made: ORT gave the buffer's value the shape [1] in place,
    and the value cache kept it under the buffer's address and the shape ()... so a scalar fed
    at that address later (the result, read as a scalar) was read as a [1] (found by
    tests/test_differential.py: a Unsqueeze of such a feed made a [1, 1])."""
    s = ortc.Session(_one_element_model([], "Unsqueeze"))
    [y] = s.run(None, {"x": np.array(3, np.float32)})
    assert y.shape == (1,) and y.tolist() == [3.0]
    for k in range(6):
        fed = y.reshape(())  # the result's own memory, as a scalar
        [y] = s.run(None, {"x": fed})
        assert y.shape == (1,) and y.tolist() == [3.0], k


def test_a_declared_dim_ort_makes_a_scalar_gives_the_scalar() -> None:
    """``y`` declared ``["n"]`` is a Squeeze of x: a scalar when n is 1, which ORT writes into
    the [1] buffer derived from the declaration: the result was that [1] (only declarations
    of one element were read back)."""
    s = ortc.Session(_one_element_model(["n"], "Squeeze"))
    s._engine.stages.active = False
    [y] = s.run(None, {"x": np.array([5.0], np.float32)})
    assert y.shape == () and y.tolist() == 5.0


def _sequence_at_runs(s: ortc.Session, label: str) -> None:
    for k, i in enumerate([0] * 6 + [1] * 6 + [0, 1, 1, 0]):
        [y] = s.run(None, {"x": np.array(2, np.float32), "i": np.array(i, np.int64)})
        assert y.shape == [(), (1,)][i] and y.tolist() in (2.0, [2.0]), (label, k)
    assert s._engine.plan(None)[1].seen is False  # a learned shape that flipped


def test_a_one_element_shape_that_follows_the_values_is_read_back() -> None:
    """An item of a sequence, a scalar or a [1] by the value of i (ORT reports a scalar for y,
    as it does for a shape it does not know): preallocated as declared, then learned; when i
    changes, ORT wrote the other item into the buffer, and the result kept the buffer's
    shape."""
    s = ortc.Session(_one_element_model(None, "SequenceAt"))
    s._engine.stages.active = False
    _sequence_at_runs(s, "general path")


def test_a_run_that_finds_a_declared_one_element_shape_wrong_as_another_thread_does() -> None:
    """Two threads' first runs of a scalar declared and a [1] made: each read the declared
    outputs' shapes back from the plan after its run, and the first to finish had taken the
    output off that list: the other returned (and staged) the scalar."""
    s = ortc.Session(_one_element_model([], "Unsqueeze"))
    engine = s._engine
    real = engine.call
    inner: list[Any] = []

    def call(*args: Any) -> Any:
        if not inner:  # another thread's run starts and ends while this one is in Run
            inner.append(None)
            t = threading.Thread(target=lambda: inner.append(
                s.run(None, {"x": np.array(1, np.float32)})[0]))
            t.start()
            t.join()
        return real(*args)

    engine.call = call  # type: ignore[method-assign]
    [y] = s.run(None, {"x": np.array(2, np.float32)})
    assert inner[1].shape == (1,) and y.shape == (1,)
    for _ in range(5):
        assert s.run(None, {"x": np.array(2, np.float32)})[0].shape == (1,)


def test_a_stage_reads_back_a_one_element_shape_that_follows_the_values(
        served_by: type) -> None:
    """The sequence item of the test above, staged (or served by a lane) with the declared,
    then with the learned shape: the stage read nothing back and kept returning the buffer's
    shape when i changed. Its model has a SequenceAt, so its one-element outputs are read
    back after every staged run."""
    s = ortc.Session(_one_element_model(None, "SequenceAt"))
    for _ in range(3):
        s.run(None, {"x": np.array(2, np.float32), "i": np.array(0, np.int64)})
    stage = s._engine.stages.by_thread[threading.get_ident()][None]
    assert type(stage) is served_by and stage.single == (0,)
    _sequence_at_runs(s, served_by.__name__)


def test_an_open_lane_reads_back_an_output_of_one_element(served_by: type) -> None:
    """``y`` declared ``["n"]``, a Squeeze of x: an open lane (shapes new every run) derived
    a [1] for n = 1, which ORT made a scalar; the lane returned the [1]."""
    from ortc._stage import OpenLane

    s = ortc.Session(_one_element_model(["n"], "Squeeze"))
    for n in range(2, 2 + 80):
        x = np.arange(n, dtype=np.float32)
        np.testing.assert_array_equal(s.run(None, {"x": x})[0], x)
    if served_by is Lane:
        assert type(s._engine.stages.by_thread[threading.get_ident()][None]) is OpenLane
    [y] = s.run(None, {"x": np.array([5.0], np.float32)})
    assert y.shape == () and y.tolist() == 5.0


def test_only_a_model_whose_ranks_may_follow_values_has_its_staged_outputs_read_back() -> None:
    """The tiny model's stage (one output of one element) makes its one C call and nothing
    else: its Add cannot change a rank by the values. A subgraph, a SequenceAt, an operator
    of another domain or in a model function could."""
    from onnx import TensorProto, helper

    from ortc._model_proto import ProtoError, rank_may_follow_values

    s = ortc.Session(models.add_model(np.float32, [1]))
    for _ in range(3):
        s.run(None, _ab(1, 0))
    assert s._engine.stages.by_thread[threading.get_ident()][None].single == ()
    assert s._engine.model_ranks is False
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])

    def model(node: Any, **kwargs: Any) -> bytes:
        return models._bytes(models.make_model([node], [x], [y], check=False, **kwargs))

    branch = helper.make_graph([helper.make_node("Neg", ["x"], ["t"])], "b", [], [
        helper.make_tensor_value_info("t", TensorProto.FLOAT, [1])])
    assert not rank_may_follow_values(model(helper.make_node("Neg", ["x"], ["y"])))
    assert rank_may_follow_values(model(helper.make_node(
        "If", ["c"], ["y"], then_branch=branch, else_branch=branch)))
    assert rank_may_follow_values(model(helper.make_node("SequenceAt", ["s", "i"], ["y"])))
    assert rank_may_follow_values(model(helper.make_node("Mine", ["x"], ["y"], domain="my"),
                                        extra_opsets={"my": 1}))
    function = helper.make_function("my", "F", ["a"], ["b"], [helper.make_node(
        "SequenceAt", ["a", "a"], ["b"])], [helper.make_opsetid("", 18)])
    assert rank_may_follow_values(model(helper.make_node("F", ["x"], ["y"], domain="my"),
                                        extra_opsets={"my": 1}, functions=[function]))
    with pytest.raises(ProtoError):
        rank_may_follow_values(b"\xff" * 8)


def test_a_declared_shape_a_stage_finds_wrong_for_other_values_gives_way(
        served_by: type) -> None:
    """``y`` declared [1], an item of a sequence of a [1] and a [1, 1] chosen by the value of
    i: staged with the [1], the [1, 1] made ORT refuse the stage's buffer, and the stage
    raised ORT's refusal where the general path runs such a model again unpreallocated (as
    onnxruntime, which gives the [1, 1])."""
    from onnx import TensorProto, helper, numpy_helper

    model = models._bytes(models.make_model(
        [helper.make_node("Unsqueeze", ["x", "axes"], ["x1"]),
         helper.make_node("SequenceConstruct", ["x", "x1"], ["seq"]),
         helper.make_node("SequenceAt", ["seq", "i"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1]),
         helper.make_tensor_value_info("i", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
        [numpy_helper.from_array(np.array([0], np.int64), "axes")], check=False))
    s = ortc.Session(model)
    for i in [0] * 4 + [1, 1, 0, 1]:
        [y] = s.run(None, {"x": np.array([2], np.float32), "i": np.array(i, np.int64)})
        assert y.shape == [(1,), (1, 1)][i]


def _cached_values_have_their_keys_shapes(s: ortc.Session) -> None:
    from ortc._numpy_bridge import tensor_shape_and_type

    for cache in s._engine.value_cache.values():
        for (_address, shape, _et), owner in cache.items():
            assert tensor_shape_and_type(s._engine.api, owner)[1] == shape


def test_a_failed_run_leaves_no_value_ort_reshaped_in_the_cache(served_by: type) -> None:
    """``y1`` a scalar declared and a [1] made, ``y2`` of it declared [1, 1] and a [1] made:
    ORT wrote y1 (giving its scalar buffer's value the shape [1]) and then refused y2's
    buffer. The run is made again unpreallocated, and the reshaped value stayed in the
    value cache under its scalar key: a scalar fed at that address later was read as a [1]
    (found by tests/test_differential.py: a Unsqueeze of it made a [1, 1])."""
    from onnx import TensorProto, helper, numpy_helper

    model = models._bytes(models.make_model(
        [helper.make_node("Unsqueeze", ["x", "axes"], ["y1"]),
         helper.make_node("Sub", ["y1", "one"], ["y2"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("y1", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, [1, 1])],
        [numpy_helper.from_array(np.array([0], np.int64), "axes"),
         numpy_helper.from_array(np.array(1, np.float32), "one")], check=False))
    s = ortc.Session(model)
    for k in range(4):
        y1, y2 = s.run(None, {"x": np.array(k, np.float32)})
        assert (y1.shape, y2.shape, y1.tolist(), y2.tolist()) == ((1,), (1,), [k], [k - 1])
        _cached_values_have_their_keys_shapes(s)
