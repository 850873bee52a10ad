"""One session served by several threads, the way ortc's thread rules allow it.

    python examples/threads.py

* ``Session.run`` is shared (Rust ``&self``) on the CPU provider: every thread calls it on the
  one session, and each gets its own right answer.
* An ``IoBinding`` is Send but not Sync: each thread makes its own. Sharing one while it runs
  raises ``ortc.ConcurrentUseError`` at once (ORT itself gives wrong results then).
* ``RunOptions.terminate()`` may be called from any thread and stops every run using them.
"""

from __future__ import annotations

import threading
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import ortc


def build_model(layers: int = 64, size: int = 256) -> bytes:
    """``y = tanh(... tanh(x @ w) @ w ...)``: slow enough to overlap runs."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array((rng.standard_normal((size, size)) / size ** 0.5)
                                .astype(np.float32), "w")
    nodes, cur = [], "x"
    for i in range(layers):
        nodes.append(helper.make_node("MatMul", [cur, "w"], [f"m{i}"]))
        nodes.append(helper.make_node("Tanh", [f"m{i}"], [f"t{i}"]))
        cur = f"t{i}"
    nodes.append(helper.make_node("Identity", [cur], ["y"]))
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", size])], initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def main() -> None:
    session = ortc.Session(build_model(), intra_op_num_threads=1)
    print("thread rules:", session.thread_rules())
    inputs = [np.full((8, 256), 0.01 * k, np.float32) for k in range(8)]
    expected = [session.run(None, {"x": x})[0] for x in inputs]

    # 1. four threads share the session, each with its own binding
    results: dict[int, bool] = {}

    def worker(k: int) -> None:
        binding = session.io_binding()  # one per thread: a binding is not Sync
        for j in range(k, len(inputs), 4):
            binding.bind_input("x", inputs[j])
            binding.bind_output("y")
            session.run_with_binding(binding)
            results[j] = bool(np.array_equal(binding.get_outputs()[0], expected[j]))
        binding.close()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"4 threads, one session, a binding each: {sum(results.values())} of "
          f"{len(inputs)} outputs equal the serial ones")

    # 2. one binding shared while it runs: refused at once instead of corrupting the result
    shared = session.io_binding()
    shared.bind_input("x", np.ones((16384, 256), np.float32))  # a run of seconds
    shared.bind_output("y")
    stop = ortc.RunOptions()
    runner = threading.Thread(target=lambda: _run_until_stopped(session, shared, stop))
    runner.start()
    time.sleep(0.2)  # the run is inside ORT by now (it takes seconds)
    try:
        shared.bind_input("x", inputs[0])
        print("rebinding a running binding was allowed (unexpected)")
    except ortc.ConcurrentUseError as exc:
        print("rebinding a running binding from another thread:", type(exc).__name__)

    # 3. terminate() from this thread stops the run on the other one
    stop.terminate()
    runner.join()
    shared.close()
    stop.close()
    session.close()


def _run_until_stopped(session: ortc.Session, binding: ortc.IoBinding,
                       stop: ortc.RunOptions) -> None:
    try:
        session.run_with_binding(binding, stop)
        print("the long run finished before terminate()")
    except ortc.OrtError as exc:
        print("the long run was stopped by terminate():", type(exc).__name__)


if __name__ == "__main__":
    main()
