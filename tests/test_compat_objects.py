"""ortc.compat's classes as Python objects, next to onnxruntime's: methods that subclasses,
wrappers and mocks replace, sessions freed by reference counting alone, the attributes
libraries read, copying and pickling.

Where the behaviour is onnxruntime's to match, each test runs it once with the real
onnxruntime and once with ortc.compat (``ort`` parametrized)."""

from __future__ import annotations

import contextlib
import copy
import gc
import os
import pickle
import threading
import weakref
from typing import Any, Iterator
from unittest import mock

import numpy as np
import onnxruntime as real_ort
import pytest

import models
import ortc
import ortc.compat as compat

ADD = models.add_model(np.float32, [3])
AB = {"a": np.array([1, 2, 3], np.float32), "b": np.array([0.5, -1, 4], np.float32)}
SUM = np.array([1.5, 1, 7], np.float32)


@pytest.fixture(params=["onnxruntime", "compat"])
def ort(request: Any) -> Any:
    return real_ort if request.param == "onnxruntime" else compat


def _session(ort: Any, model: bytes = ADD) -> Any:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


# -- run and the other methods belong to the class ----------------------------------------------
def test_run_is_a_method_of_the_class_not_of_the_instance(ort: Any) -> None:
    sess = _session(ort)
    assert "run" not in vars(sess)
    assert sess.run.__func__ is ort.InferenceSession.run
    callables = [k for k, v in vars(sess).items() if callable(v) and not isinstance(v, type)]
    # an instance holds no function of its own (what it holds is the native session's)
    assert not [k for k in callables if getattr(getattr(sess, k), "__self__", None) is sess]


def test_a_subclass_overriding_run_is_called(ort: Any) -> None:
    calls = []

    class Counting(ort.InferenceSession):  # type: ignore[misc, name-defined]
        def run(self, output_names: Any, input_feed: Any, run_options: Any = None) -> Any:
            calls.append(sorted(input_feed))
            return [2 * y for y in super().run(output_names, input_feed, run_options)]

    sess = Counting(ADD, providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, AB)[0], 2 * SUM)
    assert calls == [["a", "b"]]


def test_a_retried_run_calls_a_subclass_run_once() -> None:
    # compat runs a refused feed again as onnxruntime's pybind layer takes it (here a list
    # converted to float32); the retry is internal, the override sees the caller's call only
    calls = []

    class Counting(compat.InferenceSession):
        def run(self, output_names: Any, input_feed: Any, run_options: Any = None) -> Any:
            calls.append(1)
            return super().run(output_names, input_feed, run_options)

    sess = Counting(ADD, providers=["CPUExecutionProvider"])
    out = sess.run(None, {"a": [1, 2, 3], "b": AB["b"]})
    np.testing.assert_array_equal(out[0], SUM)
    assert calls == [1]


def test_a_wrapper_assigned_to_the_class_run_is_called(ort: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    original = ort.InferenceSession.run
    seen = []

    def wrapped(self: Any, output_names: Any, input_feed: Any, run_options: Any = None) -> Any:
        seen.append(self)
        return original(self, output_names, input_feed, run_options)

    sess = _session(ort)  # made before the class is patched: it takes the new run too
    monkeypatch.setattr(ort.InferenceSession, "run", wrapped)
    np.testing.assert_array_equal(sess.run(None, AB)[0], SUM)
    np.testing.assert_array_equal(_session(ort).run(["c"], AB)[0], SUM)
    assert seen[0] is sess and len(seen) == 2


def test_mock_patch_object_replaces_run(ort: Any) -> None:
    sess = _session(ort)
    with mock.patch.object(ort.InferenceSession, "run", return_value=["mocked"]) as run:
        assert sess.run(None, AB) == ["mocked"]
        run.assert_called_once_with(None, AB)
    np.testing.assert_array_equal(sess.run(None, AB)[0], SUM)  # restored


@pytest.mark.parametrize("method", ["run_with_ort_values", "get_inputs", "io_binding",
                                    "run_with_iobinding", "get_providers", "run_async"])
def test_the_other_methods_are_patchable_too(ort: Any, method: str) -> None:
    sess = _session(ort)
    with mock.patch.object(ort.InferenceSession, method, return_value="mocked"):
        assert getattr(sess, method)() == "mocked"


# -- released by reference counting alone ------------------------------------------------------
def _native_threads() -> int:
    # ORT's pool threads are no Python threads: the kernel's list counts them
    return len(os.listdir("/proc/self/task"))


@contextlib.contextmanager
def _no_cyclic_gc() -> Iterator[list[Any]]:
    """The collector off for the block; afterwards the list holds what a collection found
    unreachable (objects freed only by the collector: reference cycles and what they hold)."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    found: list[Any] = []
    try:
        yield found
    finally:
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        found.extend(gc.garbage)
        gc.garbage.clear()
        gc.set_debug(0)
        if was_enabled:
            gc.enable()


def _use_everything(sess: Any) -> None:
    """Every kind of compat object a session makes or takes, used once (but run_async: see
    test_run_async_makes_no_cycle_of_compat_objects)."""
    sess.run(None, AB)
    sess.run(["c"], AB, compat.RunOptions())
    sess.run(None, {"a": [1, 2, 3], "b": AB["b"]})  # refused natively, taken on the retry
    with pytest.raises(compat.capi.onnxruntime_pybind11_state.InvalidArgument):
        sess.run(["nope"], AB)  # the failure path and its checks
    values = {k: compat.OrtValue.ortvalue_from_numpy(v) for k, v in AB.items()}
    sess.run_with_ort_values(["c"], values)[0].numpy()
    binding = sess.io_binding()
    binding.bind_cpu_input("a", AB["a"])
    binding.bind_ortvalue_input("b", values["b"])
    binding.bind_output("c")
    sess.run_with_iobinding(binding)
    binding.copy_outputs_to_cpu()
    binding.get_outputs()
    sess._sess.run_with_ort_values({k: v._ortvalue for k, v in values.items()}, ["c"], None)
    sess._sess.run_with_iobinding(binding._iobinding, None)  # (onnxruntime's C session's calls)
    sess.get_inputs(), sess.get_outputs(), sess.get_modelmeta(), sess.get_session_options()


def test_sessions_are_freed_when_their_last_reference_goes() -> None:
    """20 sessions made, used and dropped with the cyclic collector off: each is gone at once
    (its native session released, its thread pool joined), as onnxruntime's are; no compat
    object sits in a reference cycle."""
    gc.collect()  # sessions earlier tests dropped go now, not in the middle of the count below
    _session(compat).run(None, AB)  # what the first session makes once (the environment...)
    handles_before = ortc.live_handles().get("Session", 0)
    threads_before = _native_threads()
    refs = []
    with _no_cyclic_gc() as unreachable:
        for _ in range(20):
            so = compat.SessionOptions()
            so.intra_op_num_threads = 2  # a pool thread of its own to leak, if it leaked
            sess = compat.InferenceSession(ADD, so, providers=["CPUExecutionProvider"])
            _use_everything(sess)
            refs.append(weakref.ref(sess))
            del sess, so
            # none made here is left (a session an earlier test dropped may go meanwhile: a
            # run_async's is let go on ortc's releaser thread, so the count may also fall)
            assert ortc.live_handles().get("Session", 0) <= handles_before
        assert [r for r in refs if r() is not None] == []
        assert _native_threads() <= threads_before
    compat_objects = [type(o).__qualname__ for o in unreachable
                      if type(o).__module__.startswith(("ortc.compat", "onnxruntime"))]
    assert compat_objects == []


def test_set_providers_frees_the_replaced_session() -> None:
    handles_before = ortc.live_handles().get("Session", 0)
    with _no_cyclic_gc():
        sess = _session(compat)
        old = weakref.ref(sess._native)
        sess.set_providers(["CPUExecutionProvider"])
        assert old() is None
        assert ortc.live_handles().get("Session", 0) == handles_before + 1
        np.testing.assert_array_equal(sess.run(None, AB)[0], SUM)
        del sess
        assert ortc.live_handles().get("Session", 0) == handles_before


def test_run_async_makes_no_cycle_of_compat_objects() -> None:
    # (ortc's own job for a run_async still holds the native session in a cycle of its own,
    # which only the collector frees: that one is the core's to break)
    with _no_cyclic_gc() as unreachable:
        for _ in range(3):
            sess = compat.InferenceSession(ADD, providers=["CPUExecutionProvider"])
            done = threading.Event()
            got: list[Any] = []
            sess.run_async(None, AB, lambda results, data, err: (got.append(results),
                                                                 done.set()), None)
            assert done.wait(30)
            np.testing.assert_array_equal(got[0][0], SUM)
            del sess
    assert [type(o).__qualname__ for o in unreachable
            if type(o).__module__.startswith(("ortc.compat", "onnxruntime"))] == []


# -- the attributes libraries read ---------------------------------------------------------------
def test_model_path_and_bytes_as_onnxruntime_keeps_them(ort: Any, tmp_path: Any) -> None:
    path = tmp_path / "add.onnx"
    path.write_bytes(ADD)
    for given in (str(path), path):  # a str and an os.PathLike: a str either way
        sess = ort.InferenceSession(given, providers=["CPUExecutionProvider"])
        assert (sess._model_path, sess._model_bytes) == (str(path), None)
        assert type(sess._model_path) is str
    sess = ort.InferenceSession(ADD, providers=["CPUExecutionProvider"])
    assert sess._model_path is None and sess._model_bytes is ADD


def test_session_options_attributes(ort: Any) -> None:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(ADD, so, providers=["CPUExecutionProvider"])
    assert sess._sess_options_initial is so
    assert sess._sess_options is sess.get_session_options() is sess.get_session_options()
    assert sess._sess_options is not so and sess._sess_options.intra_op_num_threads == 1
    sess._sess_options.logid = "changed"  # reads back from the session's copy...
    assert sess.get_session_options().logid == "changed" and so.logid == ""  # ...only
    sess.set_providers(["CPUExecutionProvider"])
    # a new session, a new copy of the caller's options
    assert sess.get_session_options() is sess._sess_options
    assert sess._sess_options.logid == "" and sess._sess_options.intra_op_num_threads == 1
    plain = ort.InferenceSession(ADD, providers=["CPUExecutionProvider"])
    assert plain._sess_options_initial is None
    assert isinstance(plain._sess_options, ort.SessionOptions)


def test_provider_and_description_attributes(ort: Any) -> None:
    sess = ort.InferenceSession(ADD, providers=["CPUExecutionProvider"])
    assert sess._providers == sess.get_providers() == ["CPUExecutionProvider"]
    assert sess._provider_options == sess.get_provider_options()
    assert list(sess._provider_options) == ["CPUExecutionProvider"]
    assert sess._fallback_providers == ["CPUExecutionProvider"]
    assert sess._enable_fallback is True
    sess.disable_fallback()
    assert sess._enable_fallback is False
    assert [a.name for a in sess._inputs_meta] == ["a", "b"]
    assert [a.name for a in sess._outputs_meta] == ["c"]
    assert sess._overridable_initializers == []
    assert sess._model_meta.graph_name == sess.get_modelmeta().graph_name


# -- pickling and copying ------------------------------------------------------------------------
def _made(ort: Any, kind: str) -> Any:
    sess = ort.InferenceSession(ADD, providers=["CPUExecutionProvider"])
    cpu = ort.OrtDevice.make("cpu", 0)
    return {
        "SessionOptions": ort.SessionOptions, "RunOptions": ort.RunOptions,
        "LoraAdapter": ort.LoraAdapter,
        "session's options": sess.get_session_options,
        "InferenceSession": lambda: sess, "IOBinding": sess.io_binding,
        "OrtValue": lambda: ort.OrtValue.ortvalue_from_numpy(AB["a"]),
        "NodeArg": lambda: sess.get_inputs()[0], "ModelMetadata": sess.get_modelmeta,
        "OrtDevice": lambda: cpu,
        "SparseTensor": lambda: ort.SparseTensor.sparse_coo_from_numpy(
            [3], np.ones(1, np.float32), np.array([1], np.int64), cpu),
    }[kind]()


def _outcome(fn: Any, obj: Any) -> tuple[str, str]:
    try:
        return "ok", type(fn(obj)).__name__
    except Exception as err:  # noqa: BLE001 - the exception is the outcome compared
        return type(err).__name__, str(err)


@pytest.mark.parametrize("kind", ["SessionOptions", "RunOptions", "LoraAdapter",
                                  "session's options", "InferenceSession", "IOBinding",
                                  "OrtValue", "NodeArg", "ModelMetadata", "OrtDevice",
                                  "SparseTensor"])
@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
def test_pickling_and_copying_as_onnxruntime(kind: str, how: str) -> None:
    """onnxruntime's extension objects refuse pickling (so copying too) with a TypeError;
    its Python-level classes holding them copy.copy, sharing them, and refuse the rest."""
    fn = {"pickle": pickle.dumps, "copy": copy.copy, "deepcopy": copy.deepcopy}[how]
    want = _outcome(fn, _made(real_ort, kind))
    got = _outcome(fn, _made(compat, kind))
    assert got == want
    assert want[0] == ("ok" if how == "copy" and kind in (
        "InferenceSession", "IOBinding", "OrtValue", "OrtDevice", "SparseTensor") else "TypeError")


def test_a_copied_session_shares_the_native_session_and_runs() -> None:
    sess = _session(compat)
    twin = copy.copy(sess)
    assert twin is not sess and twin._native is sess._native
    np.testing.assert_array_equal(twin.run(None, AB)[0], SUM)
    value = compat.OrtValue.ortvalue_from_numpy(AB["a"])
    assert copy.copy(value).numpy() is not None and copy.copy(value)._value is value._value


def test_session_options_errors_name_no_private_attribute() -> None:
    # what copying compat's SessionOptions raised before: AttributeError('_values')
    so = compat.SessionOptions()
    with pytest.raises(TypeError, match="cannot pickle 'onnxruntime.capi."
                                        "onnxruntime_pybind11_state.SessionOptions' object"):
        copy.deepcopy(so)


# -- what a compat session reads from its native session on first use ---------------------------

def test_native_options_skip_only_the_native_defaults() -> None:
    """native() passes on the settings that differ from a new ortc.SessionOptions' values: the
    values it takes for the rest are those (read back from a new one here)."""
    from ortc.compat._options import _NATIVE_DEFAULTS

    fresh = ortc.SessionOptions()
    assert {k: getattr(fresh, k) for k in _NATIVE_DEFAULTS} == _NATIVE_DEFAULTS
    so = compat.SessionOptions()
    so.intra_op_num_threads = 2
    so.enable_mem_pattern = False
    so.graph_optimization_level = compat.GraphOptimizationLevel.ORT_ENABLE_BASIC
    native = so.native()
    try:
        assert (native.intra_op_num_threads, native.enable_mem_pattern,
                native.graph_optimization_level) == (2, False, 1)
        assert native._values == {"intra_op_num_threads": 2, "enable_mem_pattern": False,
                                  "graph_optimization_level": 1}
    finally:
        native.close()


def test_threads_reading_a_new_compat_sessions_description_at_once_share_one() -> None:
    """get_inputs(), get_outputs(), get_modelmeta() and run() of a new session, each first
    called by several threads at once: one value each, the same in every thread."""
    for _ in range(10):
        sess = compat.InferenceSession(ADD, providers=["CPUExecutionProvider"])
        barrier = threading.Barrier(8)
        seen: list[Any] = []

        def use(i: int) -> None:
            barrier.wait()
            seen.append((i % 4, [sess.get_inputs, sess.get_outputs, sess.get_modelmeta,
                                 lambda: sess.run(None, AB)][i % 4]()))

        threads = [threading.Thread(target=use, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(seen) == 8
        for kind in range(3):
            values = [v for k, v in seen if k == kind]
            assert len(values) == 2 and values[0] is values[1]
        assert [a.name for a in sess.get_inputs()] == ["a", "b"]
        for out in (v for k, v in seen if k == 3):
            np.testing.assert_array_equal(out[0], SUM)


def test_set_providers_forgets_what_was_read_from_the_replaced_session() -> None:
    sess = compat.InferenceSession(ADD, providers=["CPUExecutionProvider"])
    before = sess.get_inputs()
    np.testing.assert_array_equal(sess.run(None, AB)[0], SUM)
    assert {"_run", "_inputs_meta"} <= vars(sess).keys()
    sess.set_providers(["CPUExecutionProvider"])
    assert not {"_run", "_inputs_meta"} & vars(sess).keys()  # forgotten with the old session
    after = sess.get_inputs()
    assert after is not before and [a.name for a in after] == ["a", "b"]
    np.testing.assert_array_equal(sess.run(None, AB)[0], SUM)


def test_a_compat_run_goes_through_the_native_session_class_as_it_is_now() -> None:
    """A compat session's run calls ortc.Session.run as the class has it at that call, not a
    method kept from the session's first run: a wrapper put in the class later (ortc's own
    compiled marker wrapper after a method's first calls, a profiler's, a mock) is used."""
    sess = compat.InferenceSession(ADD, providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, AB)[0], SUM)
    calls: list[Any] = []
    native_run = ortc.Session.run

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(self)
        return native_run(self, *args, **kwargs)

    with mock.patch.object(ortc.Session, "run", counted):
        np.testing.assert_array_equal(sess.run(None, AB)[0], SUM)
    assert calls == [sess._native]
    np.testing.assert_array_equal(sess.run(None, AB)[0], SUM)
    assert len(calls) == 1


def test_a_compat_session_made_and_dropped_reads_no_description() -> None:
    from ortc._loader import api

    calls: list[str] = []

    def wrap(name: str, original: Any) -> Any:
        def call(*args: Any) -> Any:
            calls.append(name)
            return original(*args)
        return call

    undo = api().instrument(wrap, ("SessionGetInputCount", "SessionGetModelMetadata"))
    try:
        sess = compat.InferenceSession(ADD, providers=["CPUExecutionProvider"])
        assert calls == []
        assert sess.get_modelmeta() is sess.get_modelmeta()
        assert calls == ["SessionGetModelMetadata"]
    finally:
        undo()


def test_settings_alone_make_the_native_session_from_keywords() -> None:
    """Options that are settings alone reach ortc.Session as keywords (no native options
    object); with anything more (a config entry, a provider's options) native() builds one.
    Either way the native session gets the same settings, and a bad value raises the same."""
    def made(so: Any, **kw: Any) -> tuple[Any, int]:
        gc.collect()
        count = ortc.live_handles().get("SessionOptions", 0)
        with mock.patch.object(compat.SessionOptions, "native",
                               autospec=True, side_effect=compat.SessionOptions.native) as nat:
            sess = compat.InferenceSession(ADD, so, **kw)
        assert ortc.live_handles().get("SessionOptions", 0) == count
        np.testing.assert_array_equal(sess.run(None, AB)[0], SUM)
        return dict(sess._native.recipe().options.settings), nat.call_count

    so = compat.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = compat.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.logid = "kw"
    settings, natives = made(so, providers=["CPUExecutionProvider"])
    assert natives == 0
    assert settings == {"intra_op_num_threads": 1, "graph_optimization_level": 1,
                        "logid": "kw"}
    arena_off, natives = made(so, providers=[("CPUExecutionProvider", {"use_arena": "0"})])
    assert natives == 1 and arena_off == {**settings, "enable_cpu_mem_arena": False}
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    with_config, natives = made(so, providers=["CPUExecutionProvider"])
    assert natives == 1 and with_config == settings
    with_config, natives = made(so, disabled_optimizers=["ConstantFolding"])
    assert natives == 1
    errors = []
    for config in (False, True):
        bad = compat.SessionOptions()
        bad.intra_op_num_threads = 1 << 20  # more threads than ortc lets a pool have
        if config:
            bad.add_session_config_entry("session.intra_op.allow_spinning", "0")
        with pytest.raises(Exception) as info, pytest.warns(UserWarning, match="not in avail"):
            compat.InferenceSession(ADD, bad, providers=["NoSuchExecutionProvider"])
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1] and "intra_op_num_threads" in errors[0][1]
