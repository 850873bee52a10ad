"""The status chokepoint: every OrtErrorCode decodes to its class with code and message kept."""

from __future__ import annotations

import pickle

import pytest

import ortc
from ortc import ErrorCode, errors
from ortc._ffi import ffi
from ortc._loader import api
from ortc._status import check, error_from_status

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
