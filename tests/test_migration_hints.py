"""onnxruntime habits on native ortc objects get a pointer, not a bare error: an onnxruntime
name raises AttributeError naming ortc's (``sess.get_inputs()`` -> ``sess.inputs``), an
``ORT_`` enum member names the member without the prefix, a TypeInfo compared with a type
string refuses loudly (TypeError naming ``.type_str``), providers given positionally and a
wrongly typed option value are TypeErrors. The onnxruntime names are read from the installed
onnxruntime package, so the table cannot name something onnxruntime does not have."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import onnxruntime  # the cpu extra installs it: its names are the table's source
import pytest

import models
import ortc
from ortc import _hints


#: the onnxruntime class each ortc class stands for
ORT_CLASS = {"Session": "InferenceSession", "SessionOptions": "SessionOptions",
             "RunOptions": "RunOptions", "IoBinding": "IOBinding", "Value": "OrtValue"}
#: how the hints name an object of each class
RECEIVER = {"Session": "sess", "SessionOptions": "opts", "RunOptions": "run_options",
            "IoBinding": "binding", "Value": "value"}


@pytest.fixture(scope="module")
def objects() -> dict[str, Any]:
    sess = ortc.Session(models.add_model(np.float32, [3]))
    return {"Session": sess, "SessionOptions": ortc.SessionOptions(),
            "RunOptions": ortc.RunOptions(), "IoBinding": sess.io_binding(),
            "Value": ortc.Value.from_numpy(np.ones(3, np.float32))}


ROWS = [(cls, name) for cls, names in _hints.ORT_NAMES.items() for name in names]


@pytest.mark.parametrize("cls, name", ROWS, ids=[f"{c}.{n}" for c, n in ROWS])
def test_an_onnxruntime_name_says_which_ortc_name_to_use(objects: dict[str, Any], cls: str,
                                                        name: str) -> None:
    obj = objects[cls]
    assert hasattr(getattr(onnxruntime, ORT_CLASS[cls]), name), \
        f"onnxruntime.{ORT_CLASS[cls]} has no {name}: the table names no onnxruntime habit"
    with pytest.raises(AttributeError) as caught:
        getattr(obj, name)
    message = str(caught.value)
    hint = _hints.ORT_NAMES[cls][name]
    assert f"ortc.{cls} has no {name!r} (onnxruntime's name): use {hint}" in message
    assert "\n" not in message
    # the hint names what ortc has: its receiver's attribute, or an ortc name
    used = re.match(rf"{RECEIVER[cls]}\.(\w+)", hint)
    if used is not None:
        assert hasattr(type(obj), used.group(1)), (hint, used.group(1))
    for public in re.findall(r"ortc\.(\w+)", hint):
        assert hasattr(ortc, public), (hint, public)


def test_common_habits_are_covered() -> None:
    """The names the issue met, among others, each have a hint."""
    for cls, name in (("Session", "get_inputs"), ("Session", "get_outputs"),
                      ("Session", "get_modelmeta"), ("Session", "get_providers"),
                      ("Session", "run_with_iobinding"), ("IoBinding", "bind_cpu_input"),
                      ("IoBinding", "copy_outputs_to_cpu"), ("RunOptions", "logid"),
                      ("SessionOptions", "add_free_dimension_override_by_denotation")):
        assert name in _hints.ORT_NAMES[cls], (cls, name)


def test_assigning_an_onnxruntime_option_says_which_to_use() -> None:
    with pytest.raises(AttributeError, match=r"use opts\.disable_per_session_threads\(\)"):
        ortc.SessionOptions().use_per_session_threads = False  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match=r"use run_options\.tag"):
        ortc.RunOptions().logid = "x"  # type: ignore[attr-defined]
    # a misspelt option still names the closest valid one
    with pytest.raises(AttributeError, match="did you mean 'intra_op_num_threads'"):
        ortc.SessionOptions().intra_op_num_thread = 1  # type: ignore[attr-defined]


def test_other_missing_names_suggest_the_closest_and_probes_stay_plain(
        objects: dict[str, Any]) -> None:
    sess = objects["Session"]
    with pytest.raises(AttributeError, match="ortc.Session has no attribute 'inptus'; did you "
                                             "mean 'inputs'"):
        sess.inptus
    # private and special names fail as plain AttributeErrors (hasattr probes on hot paths)
    with pytest.raises(AttributeError) as caught:
        sess._no_such_thing
    assert str(caught.value) == "'Session' object has no attribute '_no_such_thing'"
    assert not hasattr(objects["Value"], "__array_struct__")
    assert hasattr(objects["Value"], "__dlpack__")


@pytest.mark.parametrize("enum", ["GraphOptimizationLevel", "ExecutionMode"])
def test_an_ort_prefixed_enum_member_names_ortcs(enum: str) -> None:
    ortc_enum = getattr(ortc, enum)
    for member in getattr(onnxruntime, enum).__members__:
        assert member.startswith("ORT_"), member
        with pytest.raises(AttributeError, match=rf"use {enum}\.{member[4:]}$"):
            getattr(ortc_enum, member)
        assert getattr(ortc_enum, member[4:]).name == member[4:]
    with pytest.raises(AttributeError, match="has no attribute 'NOPE'"):
        getattr(ortc_enum, "NOPE")


def test_module_level_onnxruntime_names() -> None:
    for name, hint in _hints.MODULE_NAMES.items():
        assert hasattr(onnxruntime, name), name
        with pytest.raises(AttributeError) as caught:
            getattr(ortc, name)
        assert f"(onnxruntime's name): use {hint}" in str(caught.value)
    with pytest.raises(AttributeError, match="use ortc.Session"):
        ortc.InferenceSession  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="did you mean 'Session'"):
        ortc.Sesion  # type: ignore[attr-defined]


def test_a_typeinfo_compared_with_a_type_string_refuses_loudly() -> None:
    """onnxruntime's NodeArg.type is a string; ortc's is a TypeInfo. Equality with the string
    would be silently False: it raises TypeError naming .type_str instead (documented on
    TypeInfo), and TypeInfos still compare and hash by their fields."""
    sess = ortc.Session(models.add_model(np.float32, [3]))
    a, b = (arg.type for arg in sess.inputs)
    for compare in (lambda: a == "tensor(float)", lambda: a != "tensor(float)",
                    lambda: "tensor(float)" == a):
        with pytest.raises(TypeError, match=r"compare its \.type_str \('tensor\(float\)'\)"):
            compare()
    assert a.type_str == "tensor(float)" and a == b and len({a, b}) == 1
    assert a != 1 and a != None  # noqa: E711 - only strings are refused
    with pytest.raises(AttributeError, match=r"use \.type_str\.startswith"):
        a.startswith("tensor")  # type: ignore[attr-defined]
    assert "raises TypeError" in (ortc.TypeInfo.__doc__ or "")


def test_providers_given_positionally_are_a_clear_type_error() -> None:
    model = models.add_model(np.float32, [3])
    with pytest.raises(TypeError, match=r"providers are keyword-only, "
                                        r"Session\(model, providers=\['CPUExecutionProvider'\]\)"):
        ortc.Session(model, ["CPUExecutionProvider"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"providers are keyword-only: Session\(model, options, "
                                        r"providers=\[\.\.\.\]\)"):
        ortc.Session(model, None, ["CPUExecutionProvider"])  # type: ignore[misc]
    ortc.Session(model, None, providers=["CPUExecutionProvider"]).close()


@pytest.mark.parametrize("make", [
    lambda: ortc.SessionOptions(intra_op_num_threads="2"),
    lambda: setattr(ortc.SessionOptions(), "inter_op_num_threads", 1.5),
    lambda: ortc.SessionOptions(graph_optimization_level="all"),
    lambda: ortc.SessionOptions(logid=3),
    lambda: ortc.SessionOptions(enable_profiling="yes"),
    lambda: ortc.RunOptions(log_verbosity_level="1"),
    lambda: ortc.RunOptions(tag=7),
    lambda: ortc.SessionOptions().add_session_config_entry("session.disable_prepacking", True),
])
def test_a_wrongly_typed_option_value_is_a_type_error(make: Any) -> None:
    with pytest.raises(TypeError) as caught:
        make()
    assert not isinstance(caught.value, ValueError), type(caught.value).__mro__
