"""IoBinding: bound inputs and outputs, ORT-allocated outputs, names, clear, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import models
import ortc


@pytest.fixture
def mlp() -> ortc.Session:
    return ortc.Session(models.mlp_model(3, 16, "batch"), intra_op_num_threads=1)


def test_bound_output_array_receives_results(mlp) -> None:
    x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    [expected] = mlp.run(None, {"x": x})
    y = np.zeros((4, 16), np.float32)
    b = mlp.io_binding()
    b.bind_input("x", x)
    b.bind_output("y", y)
    for _ in range(3):
        y[:] = 0
        mlp.run_with_binding(b)
        np.testing.assert_array_equal(y, expected)
    # inputs are used in place: changing the array changes the next result
    x *= 2
    mlp.run_with_binding(b)
    np.testing.assert_array_equal(y, mlp.run(None, {"x": x})[0])
    assert b.output_names() == ["y"]
    [out] = b.get_outputs()
    assert np.shares_memory(out, y)


def test_ort_allocated_outputs(mlp) -> None:
    x = np.ones((2, 16), np.float32)
    b = mlp.io_binding()
    b.bind_input("x", x)
    b.bind_output("y")
    mlp.run_with_binding(b, ortc.RunOptions(tag="bound"))
    [y] = b.get_outputs()
    np.testing.assert_array_equal(y, mlp.run(None, {"x": x})[0])
    [v] = b.get_output_values()
    assert isinstance(v, ortc.Value) and v.shape == (2, 16)
    b.synchronize_inputs()
    b.synchronize_outputs()
    b.clear_binding_outputs()
    assert b.output_names() == []
    b.clear_binding_inputs()
    with pytest.raises(ortc.OrtError):
        mlp.run_with_binding(b)


@pytest.mark.parametrize("kind", ["float", "string", "sequence", "empty"])
def test_get_outputs_copy_gives_arrays_of_their_own(kind: str) -> None:
    """get_outputs(copy=True): what get_outputs gives, every array its own memory, unchanged
    by later runs with the binding (ORT reuses the memory of the outputs it allocated)."""
    model, feed = {
        "float": (models.add_model(np.float32, [3]), {"a": np.arange(3, dtype=np.float32),
                                                      "b": np.ones(3, np.float32)}),
        "string": (models.identity_model(np.str_, [2]), {"x": np.array(["a", "bc"])}),
        "sequence": (models.split_to_sequence_model(), {"x": np.arange(6, dtype=np.float32)
                                                        .reshape(3, 2)}),
        "empty": (models.add_model(np.float32, [0]), {"a": np.zeros(0, np.float32),
                                                      "b": np.zeros(0, np.float32)}),
    }[kind]
    s = ortc.Session(model, intra_op_num_threads=1)
    b = s.io_binding()
    for name, array in feed.items():
        b.bind_input(name, array)
    for out in s.outputs:
        b.bind_output(out.name)
    s.run_with_binding(b)
    views, copies = b.get_outputs(), b.get_outputs(copy=True)
    expected = s.run(None, feed)

    def arrays(x: Any) -> list[np.ndarray]:
        return [x] if isinstance(x, np.ndarray) else [a for item in x for a in arrays(item)]

    for view, copy, want in zip(views, copies, expected):
        assert type(copy) is type(view)
        for v, c, w in zip(arrays(view), arrays(copy), arrays(want)):
            assert c.dtype == w.dtype and c.shape == w.shape
            np.testing.assert_array_equal(c, w)
            assert c.flags.owndata and not np.shares_memory(c, v)
    if kind == "float":
        before = copies[0].copy()
        feed["a"] += 10  # bound in place: the next run writes other values into ORT's output
        s.run_with_binding(b)
        np.testing.assert_array_equal(copies[0], before)
        np.testing.assert_array_equal(b.get_outputs(copy=True)[0], before + 10)


def test_binding_errors(mlp) -> None:
    b = mlp.io_binding()
    with pytest.raises(ortc.InvalidArgument, match="unknown input name 'nope'"):
        b.bind_input("nope", np.ones((1, 16), np.float32))
    with pytest.raises(ortc.InvalidArgument, match="expected tensor\\(float\\)"):
        b.bind_input("x", np.ones((1, 16), np.float64))
    with pytest.raises(ortc.InvalidArgument, match="C-contiguous and writeable"):
        b.bind_output("y", np.ones((16, 2), np.float32).T)
    ro = np.ones((1, 16), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ortc.InvalidArgument, match="writeable"):
        b.bind_output("y", ro)
    other = ortc.Session(models.mlp_model(3, 16, "batch"))
    with pytest.raises(ortc.InvalidArgument, match="another session"):
        other.run_with_binding(b)


def test_bound_values(mlp) -> None:
    x = ortc.Value.from_numpy(np.ones((1, 16), np.float32))
    y = ortc.Value.from_numpy(np.zeros((1, 16), np.float32))
    b = mlp.io_binding()
    b.bind_input("x", x)
    b.bind_output("y", y)
    mlp.run_with_binding(b)
    np.testing.assert_array_equal(y.numpy(), mlp.run(None, {"x": x})[0])


def test_bound_output_value_is_exclusive_while_bound() -> None:
    """Every run with the binding writes a Value bound as an output, so the binding holds it
    exclusively until it is unbound: its own thread may read it between runs, another
    thread is refused (strict) until then."""
    import threading

    s = ortc.Session(models.add_model(np.float32, [2]), intra_op_num_threads=1)
    out = ortc.Value.from_numpy(np.zeros(2, np.float32))
    b = s.io_binding()
    b.bind_input("a", np.array([1, 2], np.float32))
    b.bind_input("b", np.array([10, 20], np.float32))
    b.bind_output("c", out)
    s.run_with_binding(b)
    assert out.numpy().tolist() == [11.0, 22.0]  # the binding's thread reads between runs

    def on_other_thread(fn: Any) -> BaseException | None:
        caught: list[BaseException | None] = [None]

        def body() -> None:
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001 - returned to the test
                caught[0] = exc

        t = threading.Thread(target=body)
        t.start()
        t.join()
        return caught[0]

    err = on_other_thread(out.numpy)
    assert isinstance(err, ortc.ConcurrentUseError), err
    assert isinstance(on_other_thread(lambda: s.run(None, {"a": out, "b": out})),
                      ortc.ConcurrentUseError)
    # a second binding on another thread cannot take it either
    other = s.io_binding()
    assert isinstance(on_other_thread(lambda: other.bind_output("c", out)),
                      ortc.ConcurrentUseError)
    b.bind_output("c")  # rebinding the name to device memory lets the value go
    assert on_other_thread(out.numpy) is None
    b.bind_output("c", out)
    b.clear_binding_outputs()  # so does clearing
    assert on_other_thread(out.numpy) is None
    b.bind_output("c", out)
    b.close()  # and closing the binding
    assert on_other_thread(out.numpy) is None
    other.close()
    s.close()


def test_a_run_from_another_thread_holds_the_callers_bound_values() -> None:
    """The thread that binds a Value holds it (an output exclusively) between runs; a run of
    the binding from another thread holds the bound Values itself for the run (inputs shared,
    outputs borrowed from the binding thread), so the binding thread's use of them during that
    run is a conflict: refused in strict mode, waited for in serialize mode. Before, only the
    binding thread's hold guarded them, and it let that thread read and write them mid-run."""
    import threading
    import time

    s = ortc.Session(models.endless_model(64), intra_op_num_threads=1)
    u = ortc.Value.from_numpy(np.ones((64, 64), np.float32))
    v = ortc.Value.from_numpy(np.zeros((64, 64), np.float32))
    b = s.io_binding()
    b.bind_input("x", u)
    b.bind_output("y", v)

    def run_in_thread() -> tuple[threading.Thread, ortc.RunOptions, list[BaseException]]:
        ro = ortc.RunOptions()
        ended: list[BaseException] = []

        def body() -> None:
            try:
                s.run_with_binding(b, ro)
            except BaseException as exc:  # noqa: BLE001 - the terminate ends it with an error
                ended.append(exc)

        t = threading.Thread(target=body)
        t.start()
        deadline = time.monotonic() + 10
        while not any(e[0] == t.ident and e[1] for e in tuple(v._guard.calls.values())):
            # (until the run has entered the output: it is in flight)
            if time.monotonic() > deadline or not t.is_alive():
                ro.terminate()
                t.join(30)
                pytest.fail(f"the run never held the bound output ({ended})")
            time.sleep(0.001)
        return t, ro, ended

    t, ro, ended = run_in_thread()
    with pytest.raises(ortc.ConcurrentUseError):
        v.numpy()
    with pytest.raises(ortc.ConcurrentUseError):
        u.fill(2.0)
    ro.terminate()
    t.join(30)
    assert len(ended) == 1 and "terminate" in str(ended[0])
    assert v.numpy().shape == (64, 64)  # the hold is the binding thread's again
    u.fill(1.0)

    old = ortc.set_thread_checks("serialize")
    try:
        t, ro, ended = run_in_thread()
        threading.Timer(0.2, ro.terminate).start()
        v.numpy()  # waits for the run to end
        assert not t.is_alive() or ended, "numpy() returned while the run was in flight"
        t.join(30)
    finally:
        ortc.set_thread_checks(old)
    b.close()


@pytest.mark.parametrize("mode", ["strict", "serialize"])
def test_a_value_bound_as_the_output_of_two_bindings_is_written_by_runs_from_other_threads(
        mode: str) -> None:
    # The binding thread holds such a Value twice (one hold per binding); a run from another
    # thread takes over both holds for its length. Taking over one hold only was refused as a
    # call in flight (strict) or waited for forever (serialize).
    import threading

    old = ortc.set_thread_checks(mode)
    try:
        s = ortc.Session(models.add_model())
        name = s.outputs[0].name
        out = ortc.Value.from_numpy(np.zeros(1, np.float32))
        bindings = []
        for k in (1.0, 2.0):
            b = s.io_binding()
            b.bind_input("a", np.full(1, k, np.float32))
            b.bind_input("b", np.ones(1, np.float32))
            b.bind_output(name, out)
            bindings.append(b)
        results: list[Any] = []

        def run(b: ortc.IoBinding) -> None:
            try:
                s.run_with_binding(b)
                results.append("ran")
            except BaseException as exc:  # noqa: BLE001 - reported below
                results.append(exc)

        for b, expected in zip(bindings, (2.0, 3.0)):
            t = threading.Thread(target=run, args=(b,))
            t.start()
            t.join(20)
            assert not t.is_alive(), "the run from another thread never started"
            assert results.pop() == "ran"
            assert out.numpy().tolist() == [expected]  # the binding thread reads it between runs
        if mode == "serialize":  # both bindings run at once from two threads: one at a time
            threads = [threading.Thread(target=run, args=(b,)) for b in bindings * 5]
            for t in threads:
                t.start()
            for t in threads:
                t.join(20)
            assert not any(t.is_alive() for t in threads)
            assert results == ["ran"] * 10
        for b in bindings:
            b.clear_binding_outputs()
        g = out._guard
        assert not g.calls and not g.holds  # no hold left behind
        out.close()
    finally:
        ortc.set_thread_checks(old)


def test_a_keyboard_interrupt_during_a_bound_runs_entries_leaves_the_hold_with_its_holder(
        monkeypatch: Any) -> None:
    # A run from another thread enters the binding thread's bound output Value through its
    # hold. A Ctrl-C raised right after that entry must leave nothing of the run behind: the
    # binding thread's own reads, the unbinding and later runs all work.
    import threading

    from ortc import _guard

    s = ortc.Session(models.add_model())
    name = s.outputs[0].name
    out = ortc.Value.from_numpy(np.zeros(1, np.float32))
    b = s.io_binding()
    b.bind_input("a", np.ones(1, np.float32))
    b.bind_input("b", np.ones(1, np.float32))
    b.bind_output(name, out)
    g = out._guard
    original = _guard.Entries.enter

    def enter(self: Any, obj: Any, exclusive: bool = False, through_holds: bool = False) -> None:
        original(self, obj, exclusive, through_holds)
        if through_holds:
            raise KeyboardInterrupt  # as a signal handler would, right after the entry
    monkeypatch.setattr(_guard.Entries, "enter", enter)
    caught: list[BaseException] = []

    def run() -> None:
        try:
            s.run_with_binding(b)
        except BaseException as exc:  # noqa: BLE001 - checked below
            caught.append(exc)

    t = threading.Thread(target=run)
    t.start()
    t.join(20)
    monkeypatch.undo()
    assert [type(e) for e in caught] == [KeyboardInterrupt]
    me = threading.get_ident()
    assert not g.busy() and list(g.holds.values()) == [me]  # the binding thread's hold only
    out.numpy()  # its reads are its own again
    b.clear_binding_outputs()
    assert not g.calls and not g.holds
    b.bind_output(name, out)
    s.run_with_binding(b)  # and the session and binding are usable
    assert out.numpy().tolist() == [2.0]


def test_names_that_are_not_utf8_bind_as_they_run() -> None:
    """A model whose input and output names are not UTF-8 (byte surgery: protobuf does not
    check) reads them back as surrogate escapes; run() took them, the binding raised
    UnicodeEncodeError (found from outside). Every bind takes them now, ortc.compat's too."""
    from onnx import TensorProto, helper

    import ortc.compat as compat

    m = models.make_model([helper.make_node("Abs", ["xQ"], ["yQ"])],
                          [models._vi("xQ", TensorProto.FLOAT, [2])],
                          [models._vi("yQ", TensorProto.FLOAT, [2])],
                          check=False).SerializeToString()
    m = m.replace(b"xQ", b"x\xff").replace(b"yQ", b"y\xfe")
    x = np.array([-1, 2], np.float32)
    with ortc.Session(m) as s:
        name_in, name_out = s.inputs[0].name, s.outputs[0].name
        assert (name_in, name_out) == ("x\udcff", "y\udcfe")
        assert s.run(None, {name_in: x})[0].tolist() == [1, 2]
        y = np.empty(2, np.float32)
        with s.io_binding() as b:
            b.bind_input(name_in, x)
            b.bind_output(name_out, y)
            s.run_with_binding(b)
            assert y.tolist() == [1, 2]
            b.bind_output(name_out)  # ORT allocates it
            s.run_with_binding(b)
            assert b.get_outputs()[0].tolist() == [1, 2]
    cs = compat.InferenceSession(m, providers=["CPUExecutionProvider"])
    io = cs.io_binding()
    io.bind_cpu_input(name_in, x)
    io.bind_output(name_out)
    cs.run_with_iobinding(io)
    assert io.copy_outputs_to_cpu()[0].tolist() == [1, 2]


def test_an_output_that_is_an_input_keeps_the_input_it_hands_back_alive() -> None:
    """ORT hands back the value bound as an input for an output of the same name (a graph
    that returns an input), over the memory of the array bound to it: get_outputs() and
    get_output_values() read that array after a rebind or a clear had let it go (a 4 MB one,
    freed, segfaulted; found by tests/test_differential.py). The outputs now keep the input
    the last run read alive; in a child process, as the old behaviour crashed."""
    from conftest import run_python

    code = r"""
import gc, numpy as np, ortc, models
from onnx import helper
x = models._vi("x", models.T.FLOAT, ["n"])
y = models._vi("y", models.T.FLOAT, ["n"])
model = models.make_model([helper.make_node("Neg", ["x"], ["y"])], [x], [y, x])
s = ortc.Session(model.SerializeToString())
n = 1 << 20
for where in ("ort", "array"):
    b = s.io_binding()
    b.bind_input("x", np.full(n, 1, np.float32))
    b.bind_output("y")
    b.bind_output("x", *([np.zeros(n, np.float32)] if where == "array" else []))
    s.run_with_binding(b)
    early = b.get_outputs()  # arrays made before the rebind
    b.bind_input("x", np.full(n, 2, np.float32))  # the first array is let go
    gc.collect()
    junk = [np.full(n, 7, np.float32) for _ in range(4)]
    late = b.get_outputs()  # still the first run's outputs: its input
    values = b.get_output_values()
    b.clear_binding_inputs()
    b.clear_binding_outputs()
    del b
    gc.collect()
    junk = [np.full(n, 9, np.float32) for _ in range(4)]
    got = [float(a[0]) for a in early + late] + [float(v.numpy()[-1]) for v in values]
    print(where, got, flush=True)
"""
    proc = run_python(code)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.splitlines() == [f"{w} [-1.0, 1.0, -1.0, 1.0, -1.0, 1.0]"
                                        for w in ("ort", "array")], proc.stdout


def test_a_scalar_output_that_is_an_input_reads_back_from_a_binding() -> None:
    # (the outputs' owners were once chosen with ``or``, which asked a 0-d Value its len())
    from onnx import helper

    x = models._vi("x", models.T.FLOAT, [])
    y = models._vi("y", models.T.FLOAT, [])
    model = models.make_model([helper.make_node("Neg", ["x"], ["y"])], [x], [x, y])
    with ortc.Session(model.SerializeToString()) as s:
        b = s.io_binding()
        for i in range(3):
            b.bind_input("x", np.array(i, np.float32))
            b.bind_output("x", np.zeros((), np.float32))
            b.bind_output("y")
            s.run_with_binding(b)
            assert [a.tolist() for a in b.get_outputs()] == [i, -i]
            assert [v.numpy().tolist() for v in b.get_output_values()] == [i, -i]


def _holders(value: ortc.Value) -> list[int]:
    """The threads holding ``value`` (binding it as an output)."""
    assert value._guard is not None
    return list(value._guard.holds.values())


def test_a_rebinding_loop_mixing_values_arrays_and_ort_memory_gives_runs_outputs() -> None:
    """What libraries do every call: rebind each input to a Value or an array, and the output
    to a Value, an array or memory ORT allocates, in any order, then run and read. Every
    run's output is bit for bit run()'s; a Value is held (as an output, by this thread) only
    while it is bound, and the binding counts each bound Value once as its child."""
    import threading

    s = ortc.Session(models.add_model(np.float32, (3,)), intra_op_num_threads=1)
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(3).astype(np.float32) for _ in range(6)]
    values = [ortc.Value.from_numpy(a) for a in arrays]
    out_arrays = [np.full(3, np.nan, np.float32) for _ in range(3)]
    out_values = [ortc.Value.from_numpy(a) for a in out_arrays]
    b = s.io_binding()
    me = threading.get_ident()
    for step in range(60):
        feeds: dict[str, Any] = {}
        for name in ("a", "b"):
            k = int(rng.integers(len(arrays)))
            feeds[name] = values[k] if rng.integers(2) else arrays[k]
            b.bind_input(name, feeds[name])
        kind = int(rng.integers(3))
        k = int(rng.integers(3))
        if kind == 0:
            b.bind_output("c", out_values[k])
        elif kind == 1:
            b.bind_output("c", out_arrays[k])
        else:
            b.bind_output("c")
        s.run_with_binding(b)
        expected = s.run(None, {n: np.asarray(v) for n, v in feeds.items()})[0]
        [view] = b.get_outputs()
        [copy] = b.get_outputs(copy=True)
        assert view.tobytes() == expected.tobytes() == copy.tobytes(), step
        assert not np.shares_memory(copy, view)
        if kind == 0:
            assert out_values[k].numpy().tobytes() == expected.tobytes()
        elif kind == 1:
            assert out_arrays[k].tobytes() == expected.tobytes()
        del view
        for j, v in enumerate(out_values):
            assert _holders(v) == ([me] if kind == 0 and j == k else []), (step, j)
        bound = [feeds[n] for n in ("a", "b") if isinstance(feeds[n], ortc.Value)]
        for v in values:  # a child of the binding once per name it is bound to
            assert len(v._others) == sum(x is v for x in bound), step
    b.clear_binding_inputs()
    b.clear_binding_outputs()
    assert all(not v._others and not v._guard.holds for v in values + out_values)


def test_a_value_closed_while_bound_stays_alive_for_the_binding_and_refuses_its_user() -> None:
    """A Value closed while a binding refers to it: its release waits for the binding (the
    runs still read it: no crash), every use of it raises ClosedError, binding it again too
    (also to a name it was bound to before, which the binding has seen it at)."""
    s = ortc.Session(models.add_model(np.float32, (2,)), intra_op_num_threads=1)
    x = ortc.Value.from_numpy(np.array([1, 2], np.float32))
    y = ortc.Value.from_numpy(np.zeros(2, np.float32))
    b = s.io_binding()
    b.bind_input("a", x)
    b.bind_input("b", x)
    b.bind_output("c", y)
    s.run_with_binding(b)
    x.close()
    y.close()
    s.run_with_binding(b)  # the binding keeps both alive for ORT
    assert [o.tolist() for o in b.get_outputs(copy=True)] == [[2.0, 4.0]]
    for use in (x.numpy, lambda: b.bind_input("a", x), lambda: b.bind_output("c", y)):
        with pytest.raises(ortc.ClosedError, match="Value is closed"):
            use()
    assert x._ptr != ortc._ffi.ffi.NULL  # not released: still bound
    b.bind_input("a", np.ones(2, np.float32))
    b.bind_input("b", np.ones(2, np.float32))
    b.bind_output("c")
    assert x._ptr == ortc._ffi.ffi.NULL and y._ptr == ortc._ffi.ffi.NULL  # released once let go
    s.run_with_binding(b)
    assert [o.tolist() for o in b.get_outputs(copy=True)] == [[2.0, 2.0]]


def test_rebinding_the_same_output_value_keeps_one_hold_and_other_threads_out() -> None:
    import threading

    s = ortc.Session(models.add_model(), intra_op_num_threads=1)
    out = ortc.Value.from_numpy(np.zeros(1, np.float32))
    b = s.io_binding()
    b.bind_input("a", np.ones(1, np.float32))
    b.bind_input("b", np.ones(1, np.float32))
    for _ in range(3):
        b.bind_output("c", out)
        s.run_with_binding(b)
    assert _holders(out) == [threading.get_ident()] and len(out._others) == 1
    caught: list[BaseException] = []
    t = threading.Thread(target=lambda: caught.append(pytest.raises(
        ortc.ConcurrentUseError, out.numpy).value))
    t.start()
    t.join()
    assert caught and "a hold" in str(caught[0])
    assert out.numpy().tolist() == [2.0]
    b.bind_output("c")
    assert _holders(out) == [] and not out._others


def test_get_outputs_copies_before_and_after_a_run() -> None:
    """get_outputs(copy=True): None for an output no run wrote yet; after a run, arrays of
    their own equal to the views, for outputs ORT allocates and bound ones alike."""
    s = ortc.Session(models.add_model(np.int64, (2, 2)), intra_op_num_threads=1)
    b = s.io_binding()
    b.bind_output("c")
    assert b.get_outputs(copy=True) == [None] and b.get_outputs() == [None]
    x = np.arange(4, dtype=np.int64).reshape(2, 2)
    b.bind_input("a", x)
    b.bind_input("b", x)
    s.run_with_binding(b)
    [copy] = b.get_outputs(copy=True)
    assert copy.dtype == np.int64 and copy.tolist() == [[0, 2], [4, 6]] and copy.flags.owndata
    y = np.zeros((2, 2), np.int64)
    b.bind_output("c", y)
    s.run_with_binding(b)
    [copy] = b.get_outputs(copy=True)
    assert copy.tolist() == y.tolist() and not np.shares_memory(copy, y)


def test_a_run_on_the_thread_holding_its_output_value_keeps_other_threads_out() -> None:
    """A bound run on the thread that bound (and so holds) the output Value does not enter
    that Value again: its hold already refuses every other thread, which stays so for the
    length of the run (a read, a write, a close), in serialize mode too."""
    import threading
    import time

    s = ortc.Session(models.endless_model(64), intra_op_num_threads=1)
    out = ortc.Value.from_numpy(np.zeros((64, 64), np.float32))
    ro = ortc.RunOptions()
    started = threading.Event()
    ended: list[BaseException] = []

    def bind_and_run() -> None:
        b = s.io_binding()
        b.bind_input("x", np.ones((64, 64), np.float32))
        b.bind_output("y", out)
        started.set()
        try:
            s.run_with_binding(b, ro)
        except BaseException as exc:  # noqa: BLE001 - the terminate ends it with an error
            ended.append(exc)
        b.clear_binding_outputs()

    t = threading.Thread(target=bind_and_run)
    t.start()
    assert started.wait(10)
    deadline = time.monotonic() + 10
    while not s._guard.calls and time.monotonic() < deadline:  # (until the run is in flight)
        time.sleep(0.001)
    old = ortc.set_thread_checks("serialize")
    try:
        for use in (out.numpy, lambda: out.fill(1.0), out.close):
            with pytest.raises(ortc.ConcurrentUseError, match="a hold"):
                use()
    finally:
        ortc.set_thread_checks(old)
        ro.terminate()
        t.join(30)
    assert len(ended) == 1 and "terminate" in str(ended[0])
    assert out.numpy().shape == (64, 64) and not out._guard.holds  # free once unbound


@pytest.mark.parametrize("then", ["close", "rebind"])
def test_a_bind_interrupted_after_taking_its_hold_leaves_no_hold_behind(
        mlp: ortc.Session, monkeypatch: pytest.MonkeyPatch, then: str) -> None:
    """A Value bound as an output is held by the binding thread; a bind stopped (a signal
    handler's KeyboardInterrupt) after the hold was taken and before the binding recorded it
    must not leave that hold for good: the binding's close, or its next bind of that output,
    lets it go, and other threads may use the Value again. (Before, the hold lived in the
    bind's frame only, kept here by the traceback; PyPy kept such a one until a collection.)"""
    import threading

    from ortc.binding import IoBinding

    out = ortc.Value.from_numpy(np.zeros((2, 16), np.float32))
    b = mlp.io_binding()

    def interrupted(self: Any, name: str, hold: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(IoBinding, "_set_output_hold", interrupted)
    with pytest.raises(KeyboardInterrupt) as caught:
        b.bind_output("y", out)
    monkeypatch.undo()
    if then == "close":
        b.close()
    else:
        b.bind_output("y", np.zeros((2, 16), np.float32))
    seen: list[Any] = []
    other = threading.Thread(target=lambda: seen.append(out.numpy().shape))
    other.start()
    other.join(10)
    assert seen == [(2, 16)], seen
    assert caught.value is not None  # (the interrupted bind's frame was alive all along)


def test_an_output_bound_to_an_object_without_its_own_memory_is_refused() -> None:
    """An object that gives its data only through __array__ may hand over a copy each time:
    ORT wrote the outputs into that copy and the object never saw them (accepted silently).
    Such an output is refused; one over the object's own memory (the array interface, the
    buffer protocol) is written in place."""

    class Converts:  # a copy per conversion
        def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
            return np.zeros((1, 3), np.float32)

    class Exposes:  # numpy's array interface over memory it keeps
        def __init__(self) -> None:
            self.memory = np.zeros((1, 3), np.float32)
            self.__array_interface__ = self.memory.__array_interface__

    with ortc.Session(models.identity_model(models.T.FLOAT, [1, 3])) as s:
        b = s.io_binding()
        b.bind_input("x", np.arange(3, dtype=np.float32).reshape(1, 3))
        with pytest.raises(ortc.InvalidArgument, match="bind_output 'y': a Converts gives its "
                                                       "data only through __array__"):
            b.bind_output("y", Converts())
        b.bind_input("x", Converts())  # (an input is read: a copy of it serves)
        exposes = Exposes()
        b.bind_output("y", exposes)
        s.run_with_binding(b)
        assert exposes.memory.tolist() == [[0, 0, 0]]  # Converts' zeros, written in place
        b.bind_input("x", np.arange(3, dtype=np.float32).reshape(1, 3))
        memory = np.zeros((1, 3), np.float32)
        b.bind_output("y", memoryview(memory))  # the buffer protocol: the memory it exposes
        s.run_with_binding(b)
        assert memory.tolist() == [[0, 1, 2]]
        b.close()


def test_an_array_subclass_is_checked_under_the_binds_own_name() -> None:
    """A masked array with masked elements bound as input or output was refused as
    "Value.from_numpy: ..." (the binding made a Value of any ndarray subclass); one without a
    mask, and np.matrix, bind in place like plain arrays."""
    with ortc.Session(models.identity_model(models.T.FLOAT, [1, 3])) as s:
        b = s.io_binding()
        masked = np.ma.masked_array(np.zeros((1, 3), np.float32), [[1, 0, 0]])
        with pytest.raises(ortc.InvalidArgument, match="^\\[INVALID_ARGUMENT\\] bind_input 'x': "
                                                       "a masked array with masked elements"):
            b.bind_input("x", masked)
        with pytest.raises(ortc.InvalidArgument, match="bind_output 'y': a masked array"):
            b.bind_output("y", masked)
        out = np.ma.masked_array(np.zeros((1, 3), np.float32))
        b.bind_input("x", np.ma.masked_array(np.arange(3, dtype=np.float32).reshape(1, 3)))
        b.bind_output("y", out)
        s.run_with_binding(b)
        assert out.tolist() == [[0, 1, 2]]  # written in place
        with pytest.warns(PendingDeprecationWarning):
            matrix = np.matrix(np.zeros((1, 3), np.float32))
        b.bind_output("y", matrix)
        s.run_with_binding(b)
        assert matrix.tolist() == [[0, 1, 2]]
        b.close()
