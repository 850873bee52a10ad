"""Every exported wrapper declares its thread rules, and every public method that touches a
handle is marked @shared or @exclusive (properties count: getter and setter)."""

from __future__ import annotations

import dataclasses
import enum
import inspect
from typing import Any

import pytest

import ortc
from ortc._handle import Handle
from ortc._record import Record
from ortc._slots import SLOTS
from ortc.threads import MethodRule, exclusive, registry, shared

#: public members of exported wrappers that carry no marker because they do not touch the
#: handle themselves, and why. A new public member must be marked or listed here.
NO_HANDLE: dict[str, str] = {
    "Handle.close": "the guard's own rule: exclusive and last (close_when_idle; a no-op for the "
                    "process-wide env, default allocator and CPU memory info); listed as "
                    "'close' in every record",
    "Handle.closed": "reads ortc's flag",
    "Handle.__enter__": "checks ortc's closed flag; the block's own calls are marked",
    "Handle.__exit__": "calls close()",
    "Env.log_severity_level": "the getter returns the level ortc set (no ORT call); the setter "
                              "is marked",
    "Value.writable": "reads ortc's flag, set at creation from the array's own (no ORT call)",
    "Session.inputs": "read once at creation; returns ortc's copy",
    "Session.outputs": "read once at creation; returns ortc's copy",
    "Session.overridable_initializers": "read once at creation; returns ortc's copy",
    "Session.providers": "the list ortc kept",
    "Session.model_metadata": "calls metadata(), which is marked",
    "Session.thread_rules": "pure Python over the provider list",
    "SessionOptions.update": "calls the marked setters",
    "SessionOptions.providers": "the list ortc kept",
    "Value.dtype": "calls element_type, which is marked",
    "Value.__array__": "calls numpy(), which is marked",
    "MemoryInfo.__eq__": "calls same_as(), which is marked",
}

#: dunders that would touch a handle if defined; the rest (__init__, __repr__, ...) are exempt
CHECKED_DUNDERS = {"__len__", "__array__", "__eq__", "__iter__", "__getitem__", "__bool__",
                   "__contains__", "__call__", "__enter__", "__exit__"}


def exported_wrappers() -> list[type]:
    return [obj for name in ortc.__all__ for obj in [getattr(ortc, name)]
            if inspect.isclass(obj) and issubclass(obj, Handle)]


def _members(cls: type) -> list[tuple[str, str, Any]]:
    """(owner class name, member name, raw attribute) for every public member of ``cls``."""
    out = []
    seen = set()
    for klass in cls.__mro__:
        if klass is object:
            continue
        for name, attr in vars(klass).items():
            if name in seen:
                continue
            seen.add(name)
            if name.startswith("_") and name not in CHECKED_DUNDERS:
                continue
            out.append((klass.__name__, name, attr))
    return out


def _setting_getter(fn: Any) -> bool:
    # SessionOptions' attribute-style options: the getter returns the value ortc applied
    return getattr(fn, "__qualname__", "") == "_setting.<locals>.get"


def test_wrappers_are_exported() -> None:
    names = {c.__name__ for c in exported_wrappers()}
    assert names >= {"Env", "Session", "SessionOptions", "RunOptions", "Value", "IoBinding",
                     "MemoryInfo", "Allocator"}
    assert names == set(registry), "every exported wrapper is registered and vice versa"


@pytest.mark.parametrize("cls", exported_wrappers(), ids=lambda c: c.__name__)
def test_class_declares_send_sync_evidence(cls: type) -> None:
    for attr in ("c_type", "send", "sync", "evidence"):
        assert attr in vars(cls), f"{cls.__name__} does not declare {attr} itself"
    assert isinstance(cls.send, bool) and isinstance(cls.sync, bool)  # type: ignore[attr-defined]
    assert cls.c_type.startswith("Ort")  # type: ignore[attr-defined]
    assert len(cls.evidence) > 20  # type: ignore[attr-defined]
    assert "Thread rules" in (cls.__doc__ or ""), f"{cls.__name__} docstring has no rules"
    for p in cls.parents:  # type: ignore[attr-defined]
        assert p.startswith("Ort")


def unmarked(cls: type) -> list[str]:
    """Public members of ``cls`` (inherited ones too) with no marker and no exemption."""
    missing = []
    for owner, name, attr in _members(cls):
        key = f"{owner}.{name}"
        if isinstance(attr, (classmethod, staticmethod)):
            continue  # constructors: a new object is not shared with anyone yet
        if isinstance(attr, property):
            parts = [("get", attr.fget), ("set", attr.fset)]
        elif callable(attr):
            parts = [("call", attr)]
        else:
            continue  # data: c_type, send, sync, evidence, parents
        for what, fn in parts:
            if fn is None:
                continue
            if isinstance(getattr(fn, "__ortc_rule__", None), MethodRule):
                continue
            if key in NO_HANDLE or (what == "get" and _setting_getter(fn)):
                continue
            missing.append(f"{key} ({what})")
    return missing


@pytest.mark.parametrize("cls", exported_wrappers(), ids=lambda c: c.__name__)
def test_every_public_method_is_marked(cls: type) -> None:
    missing = unmarked(cls)
    assert not missing, f"public members with no @shared/@exclusive marker: {missing}"


def test_the_walk_finds_unmarked_members() -> None:
    from ortc.threads import shared

    class Probe(Handle):  # no c_type: not registered
        @shared("Run")
        def fine(self) -> None: ...

        def forgotten(self) -> None: ...

        @property
        def prop(self) -> int:
            return 1

        def __len__(self) -> int:
            return 0

        def _private(self) -> None: ...

    assert sorted(unmarked(Probe)) == ["Probe.__len__ (call)", "Probe.forgotten (call)",
                                       "Probe.prop (get)"]


def test_no_stale_exemptions() -> None:
    members = {f"{owner}.{name}": attr for cls in exported_wrappers()
               for owner, name, attr in _members(cls)}
    for key in NO_HANDLE:
        assert key in members, f"NO_HANDLE lists {key}, which no longer exists"
        attr = members[key]
        fns = [attr.fget, attr.fset] if isinstance(attr, property) else [attr]
        assert not all(isinstance(getattr(f, "__ortc_rule__", None), MethodRule)
                       for f in fns if f is not None), f"{key} is marked now: drop it"


def test_marker_rules_name_real_c_functions() -> None:
    slots = {name for name, _ in SLOTS}
    for cls_name, rec in registry.items():
        for meth, rule in rec.methods.items():
            assert rule.kind in ("shared", "exclusive"), (cls_name, meth)
            for c_fn in rule.c_functions:
                assert c_fn in slots, f"{cls_name}.{meth}: {c_fn} is not an OrtApi function"
            for arg, kind in rule.args:
                assert kind in ("shared", "exclusive")


def test_markers_wrap_with_the_guard() -> None:
    assert ortc.Session.end_profiling.__ortc_rule__.kind == "exclusive"  # type: ignore
    assert ortc.IoBinding.bind_input.__ortc_rule__.kind == "exclusive"  # type: ignore
    assert ortc.RunOptions.terminate.__ortc_rule__.kind == "shared"  # type: ignore
    tag = ortc.RunOptions.tag
    assert tag.fget.__ortc_rule__.kind == "shared"  # type: ignore[attr-defined]
    assert tag.fset.__ortc_rule__.kind == "exclusive"  # type: ignore[attr-defined]
    run = ortc.Session.run.__ortc_rule__  # type: ignore[attr-defined]
    assert run.kind == "shared" and run.exclusive_when == "_run_exclusive"
    assert dict(run.args) == {"run_options": "shared"}


class _Marked:
    """A guarded object whose marked methods take every kind of parameter (the wrappers are
    compiled with each method's own parameters)."""

    _guard: Any = None  # (a class attribute: how a marker tells a handle argument)

    def __init__(self) -> None:
        from ortc._guard import Guard

        self._guard: Any = Guard(True, True)

    @shared()
    def every_kind(self, x: Any, y: Any = [2], *rest: Any, z: Any, w: Any = 5,
                   **more: Any) -> Any:
        return x, y, rest, z, w, more

    @exclusive(args={"other": "exclusive"})
    def named_like_its_wrapper(self, other: Any = None, *, token: Any = 3, guard: Any = 4,
                               fn: Any = 5) -> Any:
        raise ValueError((other, token, guard, fn, len(self._guard.calls),
                          other is not None and len(other._guard.calls)))


def test_marker_wrappers_pass_every_kind_of_argument_on_unchanged() -> None:
    """The general wrapper (a method's first calls) and the one compiled with the method's own
    parameters (put in the class by a later call) pass the same arguments on and make the same
    entries."""
    general = {name: vars(_Marked)[name] for name in ("every_kind", "named_like_its_wrapper")}
    m, other = _Marked(), _Marked()
    default = _Marked.every_kind.__wrapped__.__defaults__[0]  # type: ignore[attr-defined]
    from ortc import _guard

    for round_ in range(_guard._CALLS_BEFORE_COMPILING + 1):  # general, then compiled
        assert m.every_kind(1, z=3) == (1, default, (), 3, 5, {})
        assert m.every_kind(1, 2, 3, 4, z=0, w=6, q=7) == (1, 2, (3, 4), 0, 6, {"q": 7})
        assert m.every_kind(x=1, z=2)[1] is default  # the method's own default object
        with pytest.raises(TypeError):
            m.every_kind(1)  # z is keyword-only and required, as the method says
        assert str(inspect.signature(_Marked.every_kind)) == \
            str(inspect.signature(_Marked.every_kind.__wrapped__))  # type: ignore[attr-defined]
        # parameters named like the guard's own locals reach the method as given, both guards
        # entered during the call (the argument's exclusively) and left after
        with pytest.raises(ValueError) as err:
            m.named_like_its_wrapper(other, token="t", guard="g", fn="f")
        assert err.value.args[0] == (other, "t", "g", "f", 1, 1), round_
        assert not m._guard.calls and not other._guard.calls
        tb = err.traceback  # the wrapper's frame is named after the method
        assert [entry.name for entry in tb][-2:] == ["named_like_its_wrapper"] * 2
    for name, first in general.items():  # the calls put the compiled ones in place
        own = vars(_Marked)[name]
        assert own is not first and own.__code__.co_filename.startswith("<ortc marker")
        assert own.__ortc_rule__ is first.__ortc_rule__  # type: ignore[attr-defined]
    assert "_m_fn(" in str(tb[-2].statement)  # its source line, in a traceback


def test_marker_refuses_parameters_named_like_its_wrapper() -> None:
    with pytest.raises(TypeError, match="_m_"):
        @shared()
        def method(self: Any, _m_token: int) -> None:
            pass


def test_only_a_plain_shared_method_goes_ahead_of_waiters() -> None:
    """ahead_of_waiters (RunOptions.terminate's) skips the serialize-mode queue: a call that
    also entered handle arguments, or could be exclusive, would skip it for them too."""
    with pytest.raises(TypeError, match="only a plain shared method goes ahead of waiters"):
        @shared(args={"other": "shared"}, ahead_of_waiters=True)
        def method(self: Any, other: Any) -> None:
            pass
    with pytest.raises(TypeError, match="only a plain shared method goes ahead of waiters"):
        @shared(exclusive_when="_busy", ahead_of_waiters=True)
        def method2(self: Any) -> None:
            pass
    assert ortc.RunOptions.terminate.__ortc_rule__.kind == "shared"  # type: ignore[attr-defined]


def test_plain_types_hold_no_handle() -> None:
    """Types ORT has that ortc exposes as plain values are immutable: frozen dataclasses, or
    records (``_record.Record``, the ones a first session makes, lighter to import) that refuse
    assignment; enums and exceptions aside. The ORT types behind them are in the rules as
    unwrapped."""
    plain = []
    for name in ortc.__all__:
        obj = getattr(ortc, name)
        if not inspect.isclass(obj) or issubclass(obj, Handle):
            continue
        if issubclass(obj, (enum.Enum, BaseException)):
            continue
        if issubclass(obj, Record):
            assert obj.__slots__ and "__dict__" not in dir(obj), f"ortc.{name} has no fields"
        else:
            assert dataclasses.is_dataclass(obj), f"ortc.{name} is neither a handle nor plain data"
            assert obj.__dataclass_params__.frozen, f"ortc.{name} is not frozen"  # type: ignore
        plain.append(name)
    assert {"TypeInfo", "ModelMetadata", "NodeArg"} <= set(plain)
    unwrapped = {r["type"]: r for r in ortc.rules() if not r["wrapped"]}
    assert "ortc.TypeInfo" in unwrapped["OrtTypeInfo"]["python"]
    assert "ortc.ModelMetadata" in unwrapped["OrtModelMetadata"]["python"]


def test_records_behave_as_frozen_dataclasses_do() -> None:
    """The records a first session makes compare, hash, print, pickle and copy by their fields
    and refuse assignment and deletion, like the frozen dataclasses they replaced."""
    import copy
    import pickle

    tensor = ortc.TypeInfo(ortc.ValueKind.TENSOR, ortc.ElementType.FLOAT, (1, "N", None))
    arg = ortc.NodeArg("x", tensor)
    info = ortc.load()
    for rec in (tensor, arg, info, ortc.TypeInfo(ortc.ValueKind.SEQUENCE, element=tensor)):
        again = pickle.loads(pickle.dumps(rec))
        assert again == rec and hash(again) == hash(rec) and again is not rec
        assert copy.copy(rec) == rec and copy.deepcopy(rec) == rec
        name = type(rec).__slots__[0]
        with pytest.raises(AttributeError, match=f"immutable: cannot assign to '{name}'"):
            setattr(rec, name, None)
        with pytest.raises(AttributeError, match="immutable: cannot delete"):
            delattr(rec, name)
        with pytest.raises(AttributeError):
            rec.not_a_field = 1
    assert repr(arg) == ("NodeArg(name='x', type=TypeInfo(kind=<ValueKind.TENSOR: 1>, "
                         "element_type=<ElementType.FLOAT: 1>, shape=(1, 'N', None), "
                         "element=None, key_type=None, denotation=''))")
    assert arg != ortc.NodeArg("y", tensor) and arg != ("x", tensor)
    assert tensor != ortc.TypeInfo(ortc.ValueKind.TENSOR, ortc.ElementType.FLOAT, (1, "N", 2))
    assert ortc.TypeInfo(ortc.ValueKind.TENSOR) == ortc.TypeInfo(kind=ortc.ValueKind.TENSOR)
    assert ortc.NodeArg.__match_args__ == ("name", "type")  # class patterns: NodeArg(n, t)
    assert ortc.TypeInfo.__match_args__[:3] == ("kind", "element_type", "shape")
    assert info.api_version == min(info.library_api, info.declared_api)


#: a NodeArg and a LibraryInfo pickled by ortc while they were frozen dataclasses (42cd3aa)
_DATACLASS_ERA_PICKLES = (
    b'\x80\x04\x95\xd5\x00\x00\x00\x00\x00\x00\x00\x8c\rortc.typeinfo\x94\x8c\x07NodeArg\x94\x93'
    b'\x94)\x81\x94}\x94(\x8c\x04name\x94\x8c\x01x\x94\x8c\x04type\x94h\x00\x8c\x08TypeInfo\x94'
    b'\x93\x94)\x81\x94}\x94(\x8c\x04kind\x94\x8c\x0bortc._enums\x94\x8c\tValueKind\x94\x93\x94K'
    b'\x01\x85\x94R\x94\x8c\x0celement_type\x94h\r\x8c\x0bElementType\x94\x93\x94K\x01\x85\x94R'
    b'\x94\x8c\x05shape\x94K\x01\x8c\x01N\x94\x86\x94\x8c\x07element\x94N\x8c\x08key_type\x94N'
    b'\x8c\ndenotation\x94\x8c\x00\x94ubub.',
    b'\x80\x04\x95\xc0\x00\x00\x00\x00\x00\x00\x00\x8c\x0cortc._loader\x94\x8c\x0bLibraryInfo'
    b'\x94\x93\x94)\x81\x94}\x94(\x8c\x04path\x94\x8c\x14/x/libonnxruntime.so\x94\x8c\x07versio'
    b'n\x94\x8c\x061.32.0\x94\x8c\x0blibrary_api\x94K \x8c\x0cdeclared_api\x94K \x8c\x0bapi_vers'
    b'ion\x94K \x8c\x06source\x94\x8c\x08explicit\x94\x8c\x08searched\x94\x8c\x01a\x94\x85\x94'
    b'\x8c\nbuild_info\x94\x8c\x01b\x94ub.',
)


def test_records_load_pickles_made_while_they_were_dataclasses() -> None:
    """A NodeArg (with its TypeInfo) or a LibraryInfo pickled by an ortc whose records were
    frozen dataclasses loads as the record, equal to the same one made now; a pickled state
    that lacks a field is refused naming it."""
    import pickle

    arg, info = (pickle.loads(p) for p in _DATACLASS_ERA_PICKLES)
    assert arg == ortc.NodeArg("x", ortc.TypeInfo(ortc.ValueKind.TENSOR, ortc.ElementType.FLOAT,
                                                  (1, "N")))
    assert info == ortc.LibraryInfo("/x/libonnxruntime.so", "1.32.0", 32, 32, 32, "explicit",
                                    ("a",), "b")
    with pytest.raises(AttributeError, match="immutable"):
        arg.name = "y"  # type: ignore[misc]
    partial = ortc.NodeArg.__new__(ortc.NodeArg)
    with pytest.raises(TypeError, match="no field 'type' in its pickled state"):
        partial.__setstate__({"name": "x"})
