"""The status chokepoint: every OrtErrorCode decodes to its class with code and message kept."""

from __future__ import annotations

import ast
import logging
import os
import pickle

import pytest

import ortc
from ortc import ErrorCode, errors
from ortc._ffi import ffi
from ortc._loader import api
from ortc._status import check, error_from_status, ignore
from conftest import ROOT

EXPECTED = {
    ErrorCode.FAIL: (errors.Fail, RuntimeError),
    ErrorCode.INVALID_ARGUMENT: (errors.InvalidArgument, ValueError),
    ErrorCode.NO_SUCHFILE: (errors.NoSuchFile, FileNotFoundError),
    ErrorCode.NO_MODEL: (errors.NoModel, RuntimeError),
    ErrorCode.ENGINE_ERROR: (errors.EngineError, RuntimeError),
    ErrorCode.RUNTIME_EXCEPTION: (errors.RuntimeException, RuntimeError),
    ErrorCode.INVALID_PROTOBUF: (errors.InvalidProtobuf, ValueError),
    ErrorCode.MODEL_LOADED: (errors.ModelLoaded, RuntimeError),
    ErrorCode.NOT_IMPLEMENTED: (errors.OrtNotImplementedError, NotImplementedError),
    ErrorCode.INVALID_GRAPH: (errors.InvalidGraph, ValueError),
    ErrorCode.EP_FAIL: (errors.EPFail, RuntimeError),
    ErrorCode.MODEL_LOAD_CANCELED: (errors.ModelLoadCanceled, RuntimeError),
    ErrorCode.MODEL_REQUIRES_COMPILATION: (errors.ModelRequiresCompilation, RuntimeError),
    ErrorCode.NOT_FOUND: (errors.OrtNotFound, LookupError),
    ErrorCode.DEVICE_RESET: (errors.DeviceReset, RuntimeError),
}


def test_every_error_code_has_a_class() -> None:
    assert set(EXPECTED) == {c for c in ErrorCode if c != ErrorCode.OK}


@pytest.mark.parametrize("code", list(EXPECTED), ids=lambda c: c.name)
def test_injected_status_decodes(code: ErrorCode) -> None:
    a = api()
    message = f"injected {code.name} é"
    status = a.CreateStatus(int(code), message.encode())
    with pytest.raises(ortc.OrtError) as info:
        check(status)
    cls, builtin = EXPECTED[code]
    err = info.value
    assert type(err) is cls and isinstance(err, builtin) and isinstance(err, ortc.Error)
    assert err.code == code and err.message == message
    assert code.name in str(err) and message in str(err)
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is cls and again.code == code and again.message == message


def test_null_status_is_success() -> None:
    check(ffi.NULL)


def test_context_prefixes_the_message() -> None:
    status = api().CreateStatus(int(ErrorCode.FAIL), b"boom")
    with pytest.raises(errors.Fail, match=r"loading x: boom"):
        check(status, "loading x")


def test_unknown_code_keeps_its_number() -> None:
    status = api().CreateStatus(77, b"from the future")
    err = error_from_status(status)
    assert type(err) is ortc.OrtError and int(err.code) == 77 and "code 77" in str(err)


def test_no_class_named_notimplemented() -> None:
    assert not hasattr(errors, "NotImplemented")
    assert issubclass(ortc.NotSupportedError, NotImplementedError)


def test_an_exception_deferred_from_a_callback_wins_over_the_failed_status() -> None:
    """What a signal handler raised inside an ORT callback (kept by the watcher) is raised when
    the ORT call returns, with the call's own failure as its context; a success raises it too,
    and it is raised once."""
    import pytest

    from ortc._interrupt import watcher
    from ortc._loader import api
    from ortc._status import check, raise_status

    watcher.defer(KeyboardInterrupt("from a handler"))
    with pytest.raises(KeyboardInterrupt, match="from a handler") as info:
        raise_status(api().CreateStatus(2, b"the call failed"))
    assert isinstance(info.value.__context__, ortc.InvalidArgument)
    assert "the call failed" in str(info.value.__context__)
    watcher.defer(KeyboardInterrupt("again"))
    with pytest.raises(KeyboardInterrupt, match="again"):
        check(ortc._ffi.ffi.NULL)
    check(ortc._ffi.ffi.NULL)  # nothing left
    assert watcher.deferred is None


def test_ignore_releases_a_failed_status_and_logs_it_at_debug(caplog: pytest.LogCaptureFixture
                                                               ) -> None:
    """A best-effort call's failure: no exception, one DEBUG line on ``ortc.status`` naming
    the call and the error, none when the caller says not to log (the watcher thread)."""
    with caplog.at_level(logging.DEBUG, logger="ortc.status"):
        ignore(api().CreateStatus(int(ErrorCode.FAIL), b"could not free"), "AllocatorFree")
        ignore(api().CreateStatus(int(ErrorCode.FAIL), b"not logged"), "Quiet", log=False)
        ignore(ffi.NULL, "Succeeded")
    lines = [(r.name, r.levelname, r.getMessage()) for r in caplog.records]
    assert lines == [("ortc.status", "DEBUG",
                      "AllocatorFree failed, ignored: [FAIL] could not free")], lines


# -- the chokepoint, held to the source ------------------------------------------------------
PACKAGE = os.path.join(ROOT, "ortc")
#: the slots that read or release a status: only _status calls them
STATUS_SLOTS = {"GetErrorCode", "GetErrorMessage", "ReleaseStatus"}
#: The conformance kit checks ORT's own behaviour on the raw OrtApi table, not ortc's wrappers
#: (a check's verdict must not rest on the code it is evidence for), and some of its checks are
#: about the status slots themselves (CreateStatus, GetErrorCode, GetErrorMessage, ReleaseStatus
#: across threads, NULL for ORT_OK): it decodes statuses with its own helpers (_capi's
#: ``Ctx.status``/``ok``/``error``). It is held to the rule on dropped statuses all the same.
DECODING_EXEMPT = ("ortc/_status.py", "ortc/conformance/")


def _status_returning_slots() -> set[str]:
    status = ffi.typeof("OrtStatus*")
    return {name for name, field in ffi.typeof("OrtApi").fields
            if field.type.kind == "function" and field.type.result is status}


def _sources() -> dict[str, ast.AST]:
    trees = {}
    for folder, _, files in os.walk(PACKAGE):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(folder, f)
                rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
                with open(path, encoding="utf-8") as fh:
                    trees[rel] = ast.parse(fh.read())
    return trees


def _called_name(call: ast.Call) -> str | None:
    fn = call.func
    return fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) \
        else None


def status_decoders(tree: ast.AST) -> list[int]:
    """Lines naming a status slot (a call, or the function passed on)."""
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr in STATUS_SLOTS]


def dropped_statuses(tree: ast.AST, slots: set[str]) -> list[tuple[int, str]]:
    """Calls of a status-returning slot made as a statement of their own: the status dropped."""
    return [(node.lineno, ast.unparse(node.value)) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and _called_name(node.value) in slots]


def test_the_scans_see_what_they_look_for() -> None:
    slots = _status_returning_slots()
    assert {"Run", "RunOptionsSetTerminate", "CreateStatus", "AllocatorFree"} <= slots
    assert not slots & STATUS_SLOTS - {"CreateStatus"}  # they return a code, a string, nothing
    tree = ast.parse("def f(api, p):\n    api.RunOptionsSetTerminate(p)\n"
                     "    check(api.RunOptionsUnsetTerminate(p))\n"
                     "    s = api.Run(p)\n    api.ReleaseStatus(s)\n")
    assert dropped_statuses(tree, slots) == [(2, "api.RunOptionsSetTerminate(p)")]
    assert status_decoders(tree) == [5]


def test_only_the_chokepoint_reads_or_releases_a_status() -> None:
    found = {path: lines for path, tree in _sources().items()
             if not path.startswith(DECODING_EXEMPT) and (lines := status_decoders(tree))}
    assert not found, f"statuses read or released outside ortc/_status.py (use check, " \
                      f"raise_status, error_from_status or ignore): {found}"


def test_no_call_drops_the_status_it_returns() -> None:
    slots = _status_returning_slots()
    found = {path: drops for path, tree in _sources().items()
             if (drops := dropped_statuses(tree, slots))}
    assert not found, f"calls whose OrtStatus* is dropped (a failure unseen, the status " \
                      f"leaked; pass it to check, or to ignore for a best-effort call): {found}"
