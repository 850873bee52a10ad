"""Session recipes and pickling (ortc/recipe.py): what a session was built from, as plain data;
Session, SessionOptions, RunOptions and Value pickle by value, other handles refuse."""

from __future__ import annotations

import dataclasses
import glob
import os
import pickle
import pickletools
from importlib import metadata
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import models
import ortc
from ortc.recipe import (RECIPE_FORMAT, OptionsRecipe, RecipeError, SessionRecipe,
                         _options_from_state, _recipe_from_state)

F32 = np.float32


def _external_model() -> bytes:
    """y = x + w, with ``w`` stored outside the model (supplied by add_external_initializers)."""
    tensor = onnx.numpy_helper.from_array(np.zeros(4, F32), "w")
    tensor.data_location = onnx.TensorProto.EXTERNAL
    tensor.ClearField("raw_data")
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", "weights.bin"
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
                              initializer=[tensor])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def _custom_ops() -> tuple[str, bytes]:
    """onnxruntime-extensions' library (a test dependency) and a model that needs it."""
    pkg = metadata.distribution("onnxruntime-extensions").locate_file("onnxruntime_extensions")
    [lib] = glob.glob(os.path.join(str(pkg), "_extensions_pydll*.so"))
    graph = helper.make_graph(
        [helper.make_node("StringUpper", ["s"], ["u"], domain="ai.onnx.contrib")], "g",
        [helper.make_tensor_value_info("s", TensorProto.STRING, [2])],
        [helper.make_tensor_value_info("u", TensorProto.STRING, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("ai.onnx.contrib", 1)])
    model.ir_version = 8
    return lib, model.SerializeToString()


def _same_description(a: ortc.Session, b: ortc.Session) -> None:
    assert [(i.name, i.type, i.shape) for i in a.inputs] == \
        [(i.name, i.type, i.shape) for i in b.inputs]
    assert [(o.name, o.type, o.shape) for o in a.outputs] == \
        [(o.name, o.type, o.shape) for o in b.outputs]
    assert a.providers == b.providers


def _bit_identical(a: list[Any], b: list[Any]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


# -- recipes ----------------------------------------------------------------------------------

def test_bytes_recipe_holds_the_callers_bytes_by_reference() -> None:
    model = models.mlp_model(3, 16, "batch")
    with ortc.Session(model, intra_op_num_threads=1) as s:
        r = s.recipe()
        assert r.model_bytes is model and r.model_path is None and r.format == RECIPE_FORMAT
        assert s.recipe() is r  # made once, at creation
        assert r.options.settings == (("intra_op_num_threads", 1),)
        with pytest.raises(dataclasses.FrozenInstanceError):
            r.model_bytes = b""  # type: ignore[misc]


def test_file_object_and_buffers_are_read_or_copied_once() -> None:
    model = models.add_model(F32, ["n"])
    import io

    for given in (io.BytesIO(model), bytearray(model), memoryview(model)):
        with ortc.Session(given) as s:
            r = s.recipe()
            assert type(r.model_bytes) is bytes and r.model_bytes == model
    buf = bytearray(model)
    with ortc.Session(buf) as s:
        buf[:] = b"\0" * len(buf)  # the caller's buffer changes: the recipe does not
        assert s.recipe().model_bytes == model


def test_path_recipe_is_absolute_and_names_the_files_content(tmp_path: Any,
                                                             monkeypatch: Any) -> None:
    """The recipe names the file and its content digest (read when the recipe is made);
    pickling then needs the file no more."""
    path = tmp_path / "m.onnx"
    model = models.mlp_model(2, 8, "batch")
    path.write_bytes(model)
    monkeypatch.chdir(tmp_path)
    with ortc.Session("m.onnx") as s:
        r = s.recipe()
        assert r.model_path == str(path) and r.model_bytes is None
        from ortc.recipe import content_digest

        assert r.model_digest == content_digest(model)
        os.remove(path)
        data = pickle.dumps(s)  # the file is gone: pickling only names it
        assert len(data) < len(model) and str(path).encode() in data


def test_from_recipe_builds_an_equal_session() -> None:
    x = np.random.default_rng(3).standard_normal((5, 16)).astype(F32)
    opts = ortc.SessionOptions(intra_op_num_threads=1,
                               graph_optimization_level=ortc.GraphOptimizationLevel.ENABLE_BASIC)
    with ortc.Session(models.mlp_model(3, 16, "batch"), opts) as s, \
            ortc.Session.from_recipe(s.recipe()) as s2:
        _same_description(s, s2)
        _bit_identical(s.run(None, {"x": x}), s2.run(None, {"x": x}))
        assert s2.recipe().options == s.recipe().options
    opts.close()


def test_every_kind_of_option_is_recorded_and_replayed(tmp_path: Any) -> None:
    lib, upper = _custom_ops()
    opts = ortc.SessionOptions(intra_op_num_threads=2, enable_mem_pattern=False,
                               execution_mode=ortc.ExecutionMode.SEQUENTIAL, logid="r")
    opts.add_session_config_entry("session.intra_op.allow_spinning", "1")
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")  # last one wins
    opts.add_free_dimension_override_by_name("n", 2)
    opts.add_free_dimension_override("DATA_BATCH", 4)
    opts.register_custom_ops_library(lib)
    opts.append_execution_provider("CPUExecutionProvider", {"use_arena": "0"})
    r = opts.recipe()
    # keywords apply in the signature's order (the order of SessionOptions' attributes)
    assert r.settings[:4] == (("intra_op_num_threads", 2), ("execution_mode", 0),
                              ("enable_mem_pattern", False), ("logid", "r"))
    assert all(type(v) in (int, str, bool) for _, v in r.settings)  # no ortc enums inside
    assert r.config_entries == (("session.intra_op.allow_spinning", "0"),)
    assert r.free_dimensions == (("name", "n", 2), ("denotation", "DATA_BATCH", 4))
    assert r.custom_op_libraries == (lib,) and r.per_session_threads is True
    assert r.providers == (("CPUExecutionProvider", (("use_arena", "0"),)),)
    again = pickle.loads(pickle.dumps(opts))
    assert again.recipe() == r
    assert again.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert again.enable_cpu_mem_arena is False and again.intra_op_num_threads == 2
    # the replayed options really carry the library: a model that needs it loads
    with ortc.Session(upper, again) as s:
        assert s.run(None, {"s": np.array(["ab", "Cd"], object)})[0].tolist() == ["AB", "CD"]
        s2 = pickle.loads(pickle.dumps(s))
        assert s2.run(None, {"s": np.array(["x", "y"], object)})[0].tolist() == ["X", "Y"]
        s2.close()
    opts.close()
    again.close()
    # a session of these needs an env with global pools: only the options are checked here
    shared_pools = ortc.SessionOptions()
    shared_pools.disable_per_session_threads()
    assert shared_pools.recipe().per_session_threads is False
    assert pickle.loads(pickle.dumps(shared_pools)).recipe().per_session_threads is False


def test_settings_become_builtin_values(tmp_path: Any) -> None:
    """Paths, numpy scalars and enums given as settings are kept as str, int and bool."""
    import pathlib

    opts = ortc.SessionOptions(optimized_model_filepath=pathlib.Path(tmp_path / "opt.onnx"),
                               intra_op_num_threads=np.int64(1), enable_mem_pattern=np.bool_(0),
                               log_severity_level=ortc.LoggingLevel.ERROR)
    settings = dict(opts.recipe().settings)
    assert settings == {"optimized_model_filepath": str(tmp_path / "opt.onnx"),
                        "intra_op_num_threads": 1, "enable_mem_pattern": False,
                        "log_severity_level": 3}
    assert all(type(v) in (str, int, bool) for v in settings.values())
    with ortc.Session(models.add_model(F32, ["n"]), opts) as s:
        s2 = pickle.loads(pickle.dumps(s))
        assert dict(s2.recipe().options.settings) == settings
        s2.close()
    assert (tmp_path / "opt.onnx").exists()
    opts.close()


def test_initializers_travel_as_arrays() -> None:
    opts = ortc.SessionOptions()
    v = ortc.Value.from_numpy(np.array([7, 8, 9], F32))
    opts.add_initializer("bias", v)
    v.close()  # closed early: the session (and the recipe's array) keep it alive
    ext = ortc.SessionOptions()
    ext.add_external_initializers({"w": np.array([10, 20, 30, 40], F32)})
    with ortc.Session(models.overridable_initializer_model(), opts) as s, \
            ortc.Session(_external_model(), ext) as e:
        [(name, arr, et)] = s.recipe().options.initializers
        assert name == "bias" and arr.tolist() == [7, 8, 9] and not arr.flags.writeable
        assert et == ortc.ElementType.FLOAT
        s2, e2 = pickle.loads(pickle.dumps((s, e)))
        assert s2.recipe() == s.recipe() and hash(s2.recipe()) == hash(s.recipe())
        assert s2.recipe() != e2.recipe()
        assert len({s.recipe(), s2.recipe(), e.recipe()}) == 2  # usable as a cache key
        assert s2.run(None, {"x": np.zeros(3, F32)})[0].tolist() == [7, 8, 9]
        assert e2.run(None, {"x": np.ones(4, F32)})[0].tolist() == [11, 21, 31, 41]
        s2.close()
        e2.close()
    opts.close()
    ext.close()


def test_the_model_bytes_travel_once_per_pickle() -> None:
    model = models.mlp_model(4, 64, "batch")  # ~70 KB of weights
    with ortc.Session(model) as s, ortc.Session.from_recipe(s.recipe()) as s2:
        one = len(pickle.dumps(s))
        assert len(model) < one < len(model) + 2000
        both = pickle.dumps([s, s2, s.recipe()])  # one bytes object, memoized by pickle
        assert len(both) < len(model) + 4000
        a, b, r = pickle.loads(both)
        assert a.recipe().model_bytes is b.recipe().model_bytes is r.model_bytes
        a.close()
        b.close()


def test_unpickling_calls_only_ortc_builders_and_numpy() -> None:
    """What a pickled session or options make the unpickler call: ortc's reconstructors and
    numpy's array reconstruction, nothing else."""
    opts = ortc.SessionOptions()
    opts.add_initializer("bias", np.array([1, 2, 3], F32))
    with ortc.Session(models.overridable_initializer_model(), opts) as s:
        data = pickle.dumps(s, protocol=pickle.HIGHEST_PROTOCOL)
    opts.close()
    names: list[str] = []
    strings: list[str] = []
    for op, arg, _ in pickletools.genops(data):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(arg)
        if op.name == "STACK_GLOBAL":
            names.append(".".join(strings[-2:]))
        elif op.name == "GLOBAL":
            names.append(arg.replace(" ", "."))
    assert names and set(names) <= {
        "ortc.session._session_from_recipe", "ortc.recipe._recipe_from_state",
        "numpy.core.multiarray._reconstruct", "numpy._core.multiarray._reconstruct",
        "numpy.core.numeric._frombuffer", "numpy._core.numeric._frombuffer",
        "numpy.ndarray", "numpy.dtype"}, names


# -- bad input --------------------------------------------------------------------------------

def test_missing_model_file_raises_no_such_file_naming_it(tmp_path: Any) -> None:
    """Unpickling needs no file (a scheduler passes sessions on); the first use does."""
    path = tmp_path / "gone.onnx"
    path.write_bytes(models.add_model(F32, ["n"]))
    with ortc.Session(str(path)) as s:
        data = pickle.dumps(s)
        r = s.recipe()
    os.remove(path)
    unpickled = pickle.loads(data)
    with pytest.raises(ortc.NoSuchFile, match="gone.onnx"):
        unpickled.run(None, {"a": np.ones(2, F32), "b": np.ones(2, F32)})
    with pytest.raises(ortc.NoSuchFile, match="gone.onnx"):
        unpickled.inputs  # noqa: B018 - every use that needs the model tries again
    with pytest.raises(ortc.NoSuchFile, match=str(path)):
        ortc.Session.from_recipe(r)


def test_a_newer_format_is_refused() -> None:
    with ortc.Session(models.add_model(F32, ["n"])) as s:
        r = s.recipe()
    newer = dataclasses.replace(r, format=RECIPE_FORMAT + 1)
    with pytest.raises(RecipeError, match=f"format {RECIPE_FORMAT + 1}.*newer ortc"):
        ortc.Session.from_recipe(newer)
    data = pickle.dumps(newer)
    with pytest.raises(RecipeError, match="newer ortc"):
        pickle.loads(data)
    with pytest.raises(TypeError, match="SessionRecipe"):
        ortc.Session.from_recipe({"model_path": "x"})  # type: ignore[arg-type]


def test_malformed_state_is_refused_before_anything_is_built() -> None:
    good = OptionsRecipe().__reduce__()[1][1]
    bad_settings = ((("intra_op_num_threads", print),),) + good[1:]
    with pytest.raises(RecipeError, match="setting"):
        _options_from_state(1, bad_settings)
    bad_init = good[:3] + ((("w", np.array([print], object), 8),),) + good[4:]
    with pytest.raises(RecipeError, match="initializer"):
        _options_from_state(1, bad_init)
    with pytest.raises(RecipeError, match="path .str. or bytes"):
        _recipe_from_state(1, None, [1, 2], good)
    with pytest.raises(RecipeError, match="path .str. or bytes"):
        _recipe_from_state(1, "/m.onnx", b"x", good)
    with pytest.raises(RecipeError, match="digest"):
        _recipe_from_state(2, None, b"x", good, "md5:00")
    with pytest.raises(RecipeError, match="not a format number"):
        _recipe_from_state("1", "/m.onnx", None, good)
    with pytest.raises(RecipeError, match="tuple"):
        _options_from_state(1, good[:-1])


# -- pickling of the other types ----------------------------------------------------------

def test_run_options_pickle_by_value() -> None:
    ro = ortc.RunOptions(tag="batch-7", log_verbosity_level=2)
    ro.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    again = pickle.loads(pickle.dumps(ro))
    assert again.tag == "batch-7" and again.log_verbosity_level == 2
    assert again.get_run_config_entry("memory.enable_memory_arena_shrinkage") == "cpu:0"
    assert again._ptr != ro._ptr
    ro.log_severity_level = ortc.LoggingLevel.ERROR
    assert pickle.loads(pickle.dumps(ro)).log_severity_level == ortc.LoggingLevel.ERROR


@pytest.mark.parametrize("array", [
    np.arange(6, dtype=np.float64).reshape(2, 3), np.array([True, False]),
    np.array(["a", "bé", ""], dtype=object), np.zeros((0, 3), np.int8),
    np.array(3.5, np.float16), np.arange(4, dtype=np.uint64)])
def test_tensor_values_pickle_as_their_array(array: Any) -> None:
    v = ortc.Value.from_numpy(array)
    w = pickle.loads(pickle.dumps(v))
    assert w.element_type == v.element_type and w.shape == v.shape
    np.testing.assert_array_equal(w.numpy(), array)


def test_sequence_and_map_values_pickle_with_exact_types() -> None:
    seq = ortc.Value.from_sequence([np.ones(2, F32), np.zeros(3, F32)])
    s2 = pickle.loads(pickle.dumps(seq))
    assert s2.type_info == seq.type_info
    assert [a.tolist() for a in s2.to_python()] == [[1, 1], [0, 0, 0]]
    mp = ortc.Value.from_map((np.array([1, 2], np.int64), np.array([0.5, 1.5], np.float64)))
    m2 = pickle.loads(pickle.dumps(mp))
    assert m2.type_info == mp.type_info  # float64 values stay float64
    assert m2.to_python() == {1: 0.5, 2: 1.5}
    smap = ortc.Value.from_map({"a": 1.0, "b": 2.0})
    seq_of_maps = ortc.Value.from_sequence([smap])
    assert pickle.loads(pickle.dumps(seq_of_maps)).type_info == seq_of_maps.type_info


def test_unpicklable_handles_name_their_class_and_reason() -> None:
    with ortc.Session(models.add_model(F32, [3])) as s:
        cases = {"IoBinding": s.io_binding(), "Allocator": s.allocator(),
                 "MemoryInfo": ortc.MemoryInfo("Cpu"), "Env": ortc.get_env()}
        for name, obj in cases.items():
            with pytest.raises(TypeError, match=f"cannot pickle ortc.{name}: .{{20,}}"):
                pickle.dumps(obj)
    with pytest.raises(TypeError, match="cannot pickle a closed ortc.Session"):
        pickle.dumps(s)
    for obj in (ortc.SessionOptions(), ortc.RunOptions(), ortc.Value.from_numpy(np.ones(2))):
        obj.close()
        with pytest.raises(TypeError, match=f"closed ortc.{type(obj).__name__}"):
            pickle.dumps(obj)


def test_empty_optional_value_is_refused() -> None:
    with ortc.Session(models.empty_optional_model()) as s:
        feeds = {i.name: np.zeros([d if isinstance(d, int) else 1 for d in i.shape or ()],
                                  i.dtype) for i in s.inputs}
        outs = s.run_with_values(None, feeds)
    empties = [v for v in outs if v is not None and not v.has_value()]
    assert empties, "the model gives an empty optional"
    with pytest.raises(TypeError, match="empty optional"):
        pickle.dumps(empties[0])


def test_pickle_and_fork_evidence_names_real_tests() -> None:
    """Every test id in the rules' "Pickle and fork" table exists."""
    import ast

    from ortc.process_rules import PICKLE_AND_FORK

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for row in PICKLE_AND_FORK:
        for ref in row["evidence"]:  # type: ignore[attr-defined]
            path, name = ref.split("::")
            with open(os.path.join(root, path), encoding="utf-8") as f:
                tree = ast.parse(f.read())
            assert any(isinstance(n, ast.FunctionDef) and n.name == name
                       for n in tree.body), ref


def test_every_options_setter_is_recorded() -> None:
    """Every way to change SessionOptions (its exclusive methods) is one the recipe records:
    a new setter fails here until ortc/recipe.py replays it."""
    from ortc.session_options import _SETTINGS
    from ortc.threads import registry

    methods = registry["SessionOptions"].methods
    setters = {m for m, r in methods.items() if r.kind == "exclusive"}
    recorded = {f"{name} (set)" for name in _SETTINGS} | {
        "add_session_config_entry", "add_free_dimension_override",
        "add_free_dimension_override_by_name", "add_initializer", "add_external_initializers",
        "register_custom_ops_library", "disable_per_session_threads",
        "append_execution_provider"}
    assert setters == recorded
