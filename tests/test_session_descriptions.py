"""Sessions made again from one model share its description (inputs, outputs, overridable
initializers) and run engine instead of reading them from ORT again (ortc.session
``_DESCRIPTIONS``): only sessions from the same bytes with the same plain settings do, and what
each session reports and computes stays its own model's."""

from __future__ import annotations

import contextlib
import io
import threading
from typing import Any, Callable, cast

import numpy as np
import pytest

import models
import ortc
import ortc.compat as ort
from ortc import ElementType, GraphOptimizationLevel


def _shares(a: ortc.Session, b: ortc.Session) -> bool:
    """Whether two sessions share a description: its inputs and outputs, its run engine."""
    shared = a._engine is b._engine and a.inputs[0] is b.inputs[0]
    assert shared or a._engine.lists is not b._engine.lists
    return shared


def _on_threads(work: Callable[[int], None], count: int) -> None:
    """``work(k)`` on ``count`` threads at once, k = 0 .. count - 1; returns when all end."""
    threads = [threading.Thread(target=work, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _ones(dtype: object) -> dict[str, np.ndarray]:
    return {"a": np.ones(1, dtype), "b": np.full(1, 2, dtype)}


def test_sessions_of_one_model_share_its_description_and_run_alike() -> None:
    data = models.add_model()
    first = ortc.Session(data, intra_op_num_threads=1)
    again = ortc.Session(bytes(bytearray(data)), intra_op_num_threads=1)  # equal bytes, new object
    assert _shares(again, first)
    assert again.inputs == first.inputs
    assert again.run(None, _ones(np.float32))[0].tolist() == [3.0]
    first.close()  # the other session's runs go on
    assert again.run(None, _ones(np.float32))[0].tolist() == [3.0]
    third = ortc.Session(data, intra_op_num_threads=1)
    assert _shares(third, again)
    assert third.run(None, {"a": np.ones(1, np.float32), "b": np.ones(1, np.float32)})[0] == 2


def test_other_settings_options_providers_files_and_large_models_read_their_own(tmp_path) -> None:
    data = models.add_model()
    base = ortc.Session(data)
    base.inputs
    assert not _shares(ortc.Session(
        data, graph_optimization_level=GraphOptimizationLevel.DISABLE_ALL), base)
    opts = ortc.SessionOptions()
    assert not _shares(ortc.Session(data, opts), base)  # its recipe is another key
    cpu = ortc.Session(data, providers=["CPUExecutionProvider"])
    assert not _shares(cpu, base)
    assert _shares(ortc.Session(data, providers=["CPUExecutionProvider"]), cpu)
    path = tmp_path / "add.onnx"
    path.write_bytes(data)
    from_file = ortc.Session(str(path))
    assert from_file._description_key() is None
    assert not _shares(ortc.Session(str(path)), from_file)
    large = models.mlp_model(layers=2, width=128)
    assert len(large) > 1 << 16
    assert ortc.Session(large)._description_key() is None


def test_models_of_equal_length_keep_their_own_types() -> None:
    as_float = models.add_model(np.float32)
    as_int = models.add_model(np.int32)
    assert len(as_float) == len(as_int) and as_float != as_int
    f = ortc.Session(as_float)
    i = ortc.Session(as_int)
    assert f.inputs[0].type.element_type == ElementType.FLOAT
    assert i.inputs[0].type.element_type == ElementType.INT32
    assert i.run(None, _ones(np.int32))[0].dtype == np.int32
    with pytest.raises(ortc.InvalidArgument, match="expected tensor"):
        ortc.Session(as_int).run(None, _ones(np.float32))


def test_sessions_sharing_a_description_run_at_once_from_threads() -> None:
    data = models.add_model(shape=(64,))
    sessions = [ortc.Session(data, intra_op_num_threads=1) for _ in range(4)]
    assert all(_shares(s, sessions[0]) for s in sessions[1:])
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for i in range(300):
                a = np.full(64, i, np.float32)
                b = np.full(64, k, np.float32)
                [c] = sessions[(i + k) % 4].run(None, {"a": a, "b": b})
                assert (c == i + k).all()
                if i % 50 == 0 and k == 0:
                    ortc.Session(data, intra_op_num_threads=1).close()  # drops shared caches
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    _on_threads(work, 3)
    assert errors == []


def test_compat_sessions_made_per_call_share_and_agree() -> None:
    data = models.add_model()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    results = [ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
               .run(None, _ones(np.float32))[0].tolist() for _ in range(3)]
    assert results == [[3.0]] * 3
    a = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    b = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    assert _shares(a._native, b._native)
    assert [i.name for i in b.get_inputs()] == ["a", "b"]


def test_compat_options_changed_between_sessions_make_the_next_session() -> None:
    # compat keeps what its options' keywords were for equal values: a change is seen
    data = models.add_model()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    first = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    so.intra_op_num_threads = 2
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    second = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    assert dict(first._native._recipe_fields[2][0])["intra_op_num_threads"] == 1
    made = dict(second._native._recipe_fields[2][0])
    assert made["intra_op_num_threads"] == 2 and made["graph_optimization_level"] == 0
    assert not _shares(first._native, second._native)
    assert second.get_session_options().intra_op_num_threads == 2
    assert first.get_session_options().intra_op_num_threads == 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    third = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    assert third.get_session_options().get_session_config_entry(
        "session.intra_op.allow_spinning") == "0"
    so.enable_mem_reuse = False  # no C API setter: refused at every session, cached or not
    with pytest.raises(Exception, match="enable_mem_reuse"):
        ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])


def _output_shape_by_optimization_model() -> bytes:
    """y = Reshape(x, c1 + c2): the output's shape is known only once constant folding (the
    default optimization level) has folded the Add; the model's ort_config asks for none."""
    import json

    import onnx
    from onnx import TensorProto, helper, numpy_helper

    c1 = numpy_helper.from_array(np.array([2, 1], np.int64), "c1")
    c2 = numpy_helper.from_array(np.array([1, 2], np.int64), "c2")
    graph = helper.make_graph(
        [helper.make_node("Add", ["c1", "c2"], ["s"]),
         helper.make_node("Reshape", ["x", "s"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [c1, c2])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    helper.set_model_props(model, {"ort_config": json.dumps(
        {"session_options": {"graph_optimization_level": 0}})})
    return cast(bytes, model.SerializeToString())


def test_settings_read_from_the_model_are_no_other_sessions_description(monkeypatch) -> None:
    # with ORT_LOAD_CONFIG_FROM_MODEL=1 ORT makes the session with the model's own settings
    # (here no optimization: the output's shape unknown), which the description key does not
    # hold: such a session reads its own, in either order
    data = _output_shape_by_optimization_model()
    monkeypatch.delenv("ORT_LOAD_CONFIG_FROM_MODEL", raising=False)
    optimized = ortc.Session(data)
    assert optimized.outputs[0].shape == (3, 3)
    monkeypatch.setenv("ORT_LOAD_CONFIG_FROM_MODEL", "1")
    from_config = ortc.Session(data)
    assert from_config.outputs[0].shape == (None, None)
    assert ort.InferenceSession(data, providers=["CPUExecutionProvider"]) \
        .get_outputs()[0].shape == [None, None]
    monkeypatch.delenv("ORT_LOAD_CONFIG_FROM_MODEL")
    other = ortc.Session(bytes(bytearray(data)))
    assert other.outputs[0].shape == (3, 3) and _shares(other, optimized)
    assert other.run(None, {"x": np.arange(9, dtype=np.float32)})[0].shape == (3, 3)


def _renamed(data: bytes, old: bytes, new: bytes) -> bytes:
    """``data`` with input name ``old`` spelt ``new`` (one byte each): a model of equal length
    whose only difference is the input's name."""
    renamed = data.replace(b"\n\x01" + old, b"\n\x01" + new)
    assert len(renamed) == len(data) and renamed != data
    return renamed


def test_models_differing_only_in_a_name_report_and_refuse_by_their_own() -> None:
    data = models.add_model()
    other = _renamed(data, b"a", b"q")
    first = ortc.Session(data)
    assert [a.name for a in first.inputs] == ["a", "b"]
    renamed = ortc.Session(other)
    assert [a.name for a in renamed.inputs] == ["q", "b"] and not _shares(renamed, first)
    with pytest.raises(ortc.InvalidArgument, match=r"unknown input name 'a'; the model's "
                                                   r"inputs are \['q', 'b'\]"):
        renamed.run(None, _ones(np.float32))
    assert renamed.run(None, {"q": np.ones(1, np.float32), "b": np.ones(1, np.float32)})[0] == 2
    with pytest.raises(ortc.InvalidArgument, match=r"\['a', 'b'\]"):
        ortc.Session(data).run(None, {"q": np.ones(1, np.float32), "b": np.ones(1, np.float32)})
    # compat's messages too (its required list is each session's own)
    compat = ort.InferenceSession(other, providers=["CPUExecutionProvider"])
    with pytest.raises(ValueError, match="Required inputs \\(\\['q'\\]\\) are missing"):
        compat.run(None, {"b": np.ones(1, np.float32)})


def test_what_a_caller_does_to_the_lists_it_is_given_stays_its_own() -> None:
    data = models.overridable_initializer_model()
    first = ortc.Session(data)
    for listed in (first.inputs, first.outputs, first.overridable_initializers):
        listed.clear()
    second = ortc.Session(data)
    assert _shares(second, first)
    assert [a.name for a in second.inputs] == ["x"]
    assert [a.name for a in first.outputs] == ["y"]
    assert [a.name for a in second.overridable_initializers] == ["bias"]
    with pytest.raises(AttributeError):
        second.inputs[0].name = "z"  # type: ignore[misc]
    assert second.run(None, {"x": np.zeros(3, np.float32)})[0].tolist() == [1, 2, 3]
    assert first.run(None, {"x": np.zeros(3, np.float32),
                            "bias": np.ones(3, np.float32)})[0].tolist() == [1, 1, 1]


def test_sessions_made_at_once_on_threads_while_the_cache_overflows() -> None:
    # threads make sessions of one model at the same moment (each first use races the others'
    # for the entry) while other models push the cache past its bound: every run is right and
    # nothing is refused
    from ortc import session as session_module

    data = models.add_model(shape=(8,))
    start = threading.Barrier(4)
    errors: list[BaseException] = []
    clears = []

    def work(k: int) -> None:
        try:
            start.wait()
            for i in range(25):
                s = ortc.Session(data, intra_op_num_threads=1)
                [c] = s.run(None, {"a": np.full(8, i, np.float32), "b": np.full(8, k, np.float32)})
                assert (c == i + k).all()
                if i % 6 == k:
                    before = len(session_module._DESCRIPTIONS)
                    for j in range(12):
                        ortc.Session(models.add_model(shape=(20 + 12 * k + j,))).inputs
                    clears.append(len(session_module._DESCRIPTIONS) < before + 12)
                if i % 2:
                    s.close()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    _on_threads(work, 4)
    assert errors == []
    assert any(clears)  # the cache did overflow while sessions of it were in use
    assert len(session_module._DESCRIPTIONS) <= session_module._DESCRIPTIONS_MAX


def test_pickled_sessions_and_forked_children_describe_their_own_model() -> None:
    from conftest import run_python

    code = r"""
import os, pickle, numpy as np, ortc, models
data = models.add_model()
other = data.replace(b"\n\x01a", b"\n\x01q")
parent = ortc.Session(data)
parent.inputs
back = pickle.loads(pickle.dumps(ortc.Session(other)))
print("unpickled", [a.name for a in back.inputs])
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    feeds = {"a": np.ones(1, np.float32), "b": np.full(1, 2, np.float32)}
    made = ortc.Session(data)  # the parent's entry, inherited
    renamed = ortc.Session(other)
    out = [made.run(None, feeds)[0].tolist(), parent.run(None, feeds)[0].tolist(),
           [a.name for a in renamed.inputs],
           renamed.run(None, {"q": np.ones(1, np.float32),
                              "b": np.ones(1, np.float32)})[0].tolist(),
           [a.name for a in made.inputs]]
    os.write(w, repr(out).encode())
    os._exit(0)
os.close(w)
print("child", os.read(r, 4096).decode())
print("exit", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == [
        "unpickled ['q', 'b']", "child [[3.0], [3.0], ['q', 'b'], [2.0], ['a', 'b']]", "exit 0"], \
        proc.stdout


def test_run_async_and_bindings_of_sessions_sharing_a_description() -> None:
    data = models.add_model(shape=(4,))
    first = ortc.Session(data, intra_op_num_threads=2)
    second = ortc.Session(data, intra_op_num_threads=2)
    assert _shares(second, first)
    futures = [s.run_async(None, {"a": np.full(4, i, np.float32), "b": np.ones(4, np.float32)})
               for i, s in enumerate([first, second] * 4)]
    assert [f.result(30)[0].tolist() for f in futures] == [[i + 1.0] * 4 for i in range(8)]
    binding = first.io_binding()
    binding.bind_input("a", np.ones(4, np.float32))
    binding.bind_input("b", np.full(4, 2, np.float32))
    binding.bind_output("c")
    with pytest.raises(ortc.InvalidArgument, match="belongs to another session"):
        second.run_with_binding(binding)
    second.close()  # its value cache goes; the first's, which the binding's values use, stays
    first.run_with_binding(binding)
    assert binding.get_outputs()[0].tolist() == [3.0] * 4
    assert first.run_async(None, {"a": np.ones(4, np.float32), "b": np.ones(4, np.float32)}
                           ).result(30)[0].tolist() == [2.0] * 4


def test_compat_options_changed_back_and_forth_match_onnxruntime() -> None:
    # one options object, changed between sessions made per call (values set, refused, set
    # back, config entries added and set again): each session, made or refused, and what every
    # session reports as its options afterwards, as onnxruntime has them
    import onnxruntime as real_ort

    data = models.add_model()
    names = ("enable_cpu_mem_arena", "enable_mem_pattern", "enable_profiling", "execution_mode",
             "graph_optimization_level", "inter_op_num_threads", "intra_op_num_threads",
             "log_severity_level", "log_verbosity_level", "logid", "optimized_model_filepath",
             "profile_file_prefix", "use_deterministic_compute", "use_per_session_threads")

    def story(lib: Any) -> list[Any]:
        so = lib.SessionOptions()
        steps: list[tuple[str, Any]] = [
            ("intra_op_num_threads", 2), ("intra_op_num_threads", 1), ("intra_op_num_threads", 2),
            ("log_severity_level", 5), ("log_severity_level", 3), ("logid", "x"), ("logid", ""),
            ("execution_mode", lib.ExecutionMode.ORT_PARALLEL), ("inter_op_num_threads", 2),
            ("execution_mode", lib.ExecutionMode.ORT_SEQUENTIAL),
            ("graph_optimization_level", lib.GraphOptimizationLevel.ORT_DISABLE_ALL),
            ("enable_mem_pattern", False), ("use_deterministic_compute", True),
            ("enable_cpu_mem_arena", False), ("log_verbosity_level", 1),
            ("config", "0"), ("intra_op_num_threads", 1), ("config", "1"), ("config", "1")]
        seen: list[Any] = []
        made = []
        for name, value in steps:
            if name == "config":
                so.add_session_config_entry("session.intra_op.allow_spinning", value)
            else:
                setattr(so, name, value)
            try:
                sess = lib.InferenceSession(data, so, providers=["CPUExecutionProvider"])
            except RuntimeError as err:
                seen.append((name, value, type(err).__name__))
                continue
            assert sess.run(None, _ones(np.float32))[0].tolist() == [3.0]
            made.append(sess)
        for sess in made:
            opts = sess.get_session_options()
            try:
                spinning = opts.get_session_config_entry("session.intra_op.allow_spinning")
            except RuntimeError:
                spinning = None
            seen.append(([str(getattr(opts, n)) for n in names], spinning))
        return seen

    with contextlib.redirect_stdout(io.StringIO()):  # (both print their fallback's notice)
        expected = story(real_ort)
        assert story(ort) == expected


def test_compat_options_changed_while_a_session_reads_them_are_not_kept_mixed() -> None:
    # compat keeps the keywords it made for the options' values: they must be made from those
    # very values. Another thread's change in the middle of the reading stands in here as a
    # prefix whose comparison sets the logid: the session may see either logid, but the
    # keywords kept for an empty logid must not carry the new one to later sessions
    so = ort.SessionOptions()

    class Prefix(str):
        def __ne__(self, other: object) -> bool:
            so.logid = "changed meanwhile"
            return str.__ne__(self, other)

    so.profile_file_prefix = Prefix("p_")
    so.keywords()
    so.logid = ""  # the values read: what was kept for them is used
    assert "logid" not in so.keywords()
    data = models.add_model()
    sess = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    assert "logid" not in dict(sess._native._recipe_fields[2][0])


def test_the_settings_are_part_of_what_is_shared() -> None:
    # the optimization level changes what ORT infers of the outputs: sessions of one model
    # with other settings report what theirs found, whichever was described first
    from ortc import session as session_module

    data = _output_shape_by_optimization_model()
    plain = GraphOptimizationLevel.DISABLE_ALL
    for unoptimized_first in (True, False):
        session_module._DESCRIPTIONS.clear()
        made = [ortc.Session(data, graph_optimization_level=plain), ortc.Session(data)]
        for sess in made if unoptimized_first else made[::-1]:
            sess.outputs
        assert made[0].outputs[0].shape == (None, None)
        assert made[1].outputs[0].shape == (3, 3)
        again = [ortc.Session(data, graph_optimization_level=plain), ortc.Session(data)]
        assert _shares(again[0], made[0]) and _shares(again[1], made[1])
        assert not _shares(made[0], made[1])


def test_options_objects_share_by_their_recipe_and_never_with_arrays_or_libraries(
        tmp_path) -> None:
    # a session made from an options object shares with another whose options' recipe is
    # equal (settings, config entries, free dimensions, providers), whatever the object
    data = models.symbolic_dim_model()

    def options(batch: int | None = None, spinning: str | None = None) -> ortc.SessionOptions:
        opts = ortc.SessionOptions(intra_op_num_threads=1)
        if batch is not None:
            opts.add_free_dimension_override_by_name("batch", batch)
        if spinning is not None:
            opts.add_session_config_entry("session.intra_op.allow_spinning", spinning)
        return opts

    plain = ortc.Session(data, options())
    assert _shares(ortc.Session(data, options()), plain)
    four = ortc.Session(data, options(batch=4))
    assert not _shares(four, plain)
    assert _shares(ortc.Session(data, options(batch=4)), four)
    two = ortc.Session(data, options(batch=2))
    assert not _shares(two, four)
    # ORT describes an overridden dimension by its size: each session its own
    assert (plain.inputs[0].shape, four.inputs[0].shape, two.inputs[0].shape) == \
        (("batch", 4), (4, 4), (2, 4))
    assert two.run(None, {"x": np.ones((2, 4), np.float32)})[0].shape == (2, 4)
    with pytest.raises(ortc.InvalidArgument):
        two.run(None, {"x": np.ones((4, 4), np.float32)})  # its own override, not four's
    assert not _shares(ortc.Session(data, options(spinning="0")), plain)
    with_initializer = models.overridable_initializer_model()
    given = ortc.SessionOptions()
    init = ortc.Session(with_initializer, given)
    init.inputs
    given.add_initializer(init.overridable_initializers[0].name,
                          np.zeros(init.overridable_initializers[0].shape, np.float32))
    added = ortc.Session(with_initializer, given)
    assert added._description_key() is None  # an array in the key: read from ORT
    assert len(added.overridable_initializers) <= len(init.overridable_initializers)


def test_sessions_unpickled_per_task_share_the_process_sessions_engine_tables() -> None:
    # a session shipped with each task: every unpickled copy runs over the process's shared
    # ORT session, with its run engine
    import pickle

    data = models.add_model()
    blob = pickle.dumps(ortc.Session(data, intra_op_num_threads=1))
    first, second = pickle.loads(blob), pickle.loads(blob)
    assert first.run(None, _ones(np.float32))[0].tolist() == [3.0]
    assert second.run(None, _ones(np.float32))[0].tolist() == [3.0]
    assert first._engine is second._engine
    first.close()
    assert second.run(None, _ones(np.float32))[0].tolist() == [3.0]


def test_the_libraries_field_a_description_key_looks_at_is_the_recipes() -> None:
    import ortc.session as session_module
    from ortc.recipe import OptionsRecipe

    opts = ortc.SessionOptions()
    frozen = opts._record.freeze(opts._values, ("CPUExecutionProvider",), {})
    recipe = OptionsRecipe(*frozen)
    assert frozen[session_module._FROZEN_LIBRARIES] is recipe.custom_op_libraries == ()
    opts._record.libraries.append("/no/such/lib.so")  # (recorded only: never loaded here)
    frozen = opts._record.freeze(opts._values, (), {})
    assert frozen[session_module._FROZEN_LIBRARIES] == ("/no/such/lib.so",) == \
        OptionsRecipe(*frozen).custom_op_libraries
