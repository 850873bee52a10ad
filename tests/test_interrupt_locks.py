"""A signal handler's exception (Ctrl-C's KeyboardInterrupt) landing on the main thread while it
holds a lock, or partway through a step it shares with another thread, must leave nothing hung
and nothing half done: ortc/_interrupt.py's module docstring. Each case runs in a fresh
interpreter, so a hang ends in the subprocess timeout (and a faulthandler dump) instead of
hanging the suite."""

from __future__ import annotations

import json

from conftest import run_python

#: wraps every lock ortc keeps at module level (found as tests/process_state_check.py finds
#: them): the first time the main thread takes one, the KeyboardInterrupt a signal handler would
#: raise right after the acquire is raised there, and the lock stays held
_LEAVE_HELD = r'''
import faulthandler, importlib, json, os, signal, sys, threading, time
import numpy as np
import ortc, models, process_state_check
from ortc import _interrupt

faulthandler.dump_traceback_later(40, exit=True)
MAIN = threading.get_ident()
tripped = []


class LeftHeld:
    def __init__(self, name, inner):
        self.name, self.inner, self.armed = name, inner, True

    def _trip(self):
        if self.armed and threading.get_ident() == MAIN:
            self.armed = False
            tripped.append(self.name)
            raise KeyboardInterrupt  # as a handler's, right after the acquire: never released

    def acquire(self, *args, **kwargs):
        got = self.inner.acquire(*args, **kwargs)
        if got:
            self._trip()
        return got

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc):
        self.inner.release()

    def release(self):
        self.inner.release()

    def locked(self):
        return self.inner.locked()

    def __getattr__(self, name):  # RLock's _is_owned and friends
        return getattr(self.inner, name)


for name in process_state_check.ortc_modules():
    if not name.startswith("ortc.conformance"):
        importlib.import_module(name)
LOCK_TYPES = (type(threading.Lock()), type(threading.RLock()))
for owner, attr, _ in process_state_check.walk([n for n in sys.modules if n.startswith("ortc")]):
    value = getattr(owner, attr)
    if isinstance(value, LOCK_TYPES):
        setattr(owner, attr, LeftHeld(f"{process_state_check._describe(owner)}.{attr}", value))
    elif isinstance(value, list):
        value[:] = [LeftHeld(f"{process_state_check._describe(owner)}.{attr}[{i}]", v)
                    if isinstance(v, LOCK_TYPES) else v for i, v in enumerate(value)]


def again(step, times=3):
    """``step``, retried after each interrupt (as a user pressing Ctrl-C would retry)."""
    for _ in range(times):
        try:
            return step()
        except KeyboardInterrupt:
            pass
    return "interrupted every time"


model = models.add_model()
one = np.ones(1, np.float32)
feeds = {"a": one, "b": one}
s = again(lambda: ortc.Session(model, intra_op_num_threads=1))
ro = ortc.RunOptions()
endless = ortc.Session(models.endless_model(), intra_op_num_threads=1)
x = np.ones((256, 256), np.float32)
steps = {
    "run": lambda: s.run(None, feeds)[0].tolist(),
    "run with a deadline": lambda: s.run(None, feeds, ro, timeout=30)[0].tolist(),
    "empty sequence": lambda: ortc.Value.empty_sequence(ortc.ElementType.FLOAT).kind.name,
}
done = {name: again(step) for name, step in steps.items()}


def ctrl_c_later():
    time.sleep(0.3)
    os.kill(os.getpid(), signal.SIGINT)


def endless_run(**kwargs):
    try:
        endless.run(None, {"x": x}, **kwargs)
        return "finished"
    except KeyboardInterrupt:
        return "KeyboardInterrupt"
    except ortc.RunTimeout:
        return "RunTimeout"


after = {}
threading.Thread(target=ctrl_c_later).start()
after["ctrl_c"] = endless_run()
after["ctrl_c_rearmed"] = s.run(None, feeds, ro)[0].tolist()
threading.Thread(target=ctrl_c_later).start()
after["ctrl_c_again"] = endless_run()
after["timeout"] = endless_run(timeout=0.2)
after["timeout_with_options"] = endless_run(timeout=0.2, run_options=ro)
after["options_rearmed"] = s.run(None, feeds, ro)[0].tolist()
other = []
t = threading.Thread(target=lambda: other.append(s.run(None, feeds, timeout=30)[0].tolist()))
t.start()
t.join()
after["other_thread"] = other
print(json.dumps({"tripped": tripped, "done": done, "after": after}))
'''


def test_an_interrupt_right_after_a_main_thread_lock_acquire_leaves_nothing_hung() -> None:
    proc = run_python(_LEAVE_HELD, timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["after"] == {
        "ctrl_c": "KeyboardInterrupt", "ctrl_c_rearmed": [2.0],
        "ctrl_c_again": "KeyboardInterrupt", "timeout": "RunTimeout",
        "timeout_with_options": "RunTimeout", "options_rearmed": [2.0],
        "other_thread": [[2.0]]}, got
    assert got["done"] == {"run": [2.0], "run with a deadline": [2.0],
                           "empty sequence": "SEQUENCE"}, got


#: a KeyboardInterrupt raised at each bytecode step in turn of ortc's deadline and Ctrl-C code
#: (ortc/_interrupt.py and ortc/_run.py's frames, through a line-and-opcode tracer: what a
#: signal handler would raise there) during a run with the caller's RunOptions and a timeout,
#: and during the re-arm after a Ctrl-C; after each, the options must not be left terminated
#: nor armed to be (a deadline nobody finishes fires later), and deadlines must still fire
_EVERY_STEP = r'''
import faulthandler, gc, json, os, sys, time
import numpy as np
import ortc, models
from ortc import _interrupt, _run

faulthandler.dump_traceback_later(130, exit=True)
TRACED = {os.path.abspath(_interrupt.__file__), os.path.abspath(_run.__file__)}
#: ortc/_run.py's steps that arm, finish and re-arm (every function of _interrupt.py is traced)
TRACED_RUN = os.path.abspath(_run.__file__)
RUN_STEPS = {"arm", "check", "close", "_close_steps", "settle_deadline", "rearm_options"}
s = ortc.Session(models.add_model(), intra_op_num_threads=1)
endless = ortc.Session(models.endless_model(), intra_op_num_threads=1)
one = np.ones(1, np.float32)
feeds = {"a": one, "b": one}
x = np.ones((256, 256), np.float32)
s.run(None, feeds)  # the Ctrl-C bridge and the watcher are in place from here


def interrupted_at(step, call):
    """Run ``call`` with a KeyboardInterrupt raised at its ``step``-th traced step; whether it
    came (False once ``step`` is past the end)."""
    count = [0]

    def local(frame, event, arg):
        if event in ("line", "opcode"):
            count[0] += 1
            if count[0] == step:
                raise KeyboardInterrupt  # the tracer is removed with it, as a handler's once
        return local

    def global_(frame, event, arg):
        path = os.path.abspath(frame.f_code.co_filename)
        if path in TRACED and (path != TRACED_RUN or frame.f_code.co_name in RUN_STEPS):
            frame.f_trace_opcodes = True
            return local
        return None

    sys.settrace(global_)
    try:
        call()
    except KeyboardInterrupt:
        return True
    finally:
        sys.settrace(None)
    return False


def deadline_run(ro):
    try:
        s.run(None, feeds, ro, timeout=0.05)
    except ortc.RunTimeout:  # a slow machine: the deadline came first, as it may
        pass


def ctrl_c_rearm(ro):
    ro.terminate()  # as the watcher does on a Ctrl-C during a main-thread run with ro
    _interrupt.watcher.interrupted.append(ro)
    s.run(None, feeds)  # re-arms at its start


bad = {}
steps = {}
for name, case in (("deadline", deadline_run), ("rearm", ctrl_c_rearm)):
    step = 0
    while True:
        step += 1
        ro = ortc.RunOptions()
        came = interrupted_at(step, lambda: case(ro))
        # an interrupt at the very entry of RunContext.close, before its try, leaves the close
        # to the context's finalizer (the context is in a cycle with its run's frame)
        gc.collect()
        time.sleep(0.06)  # past the deadline: one left armed has fired by now
        try:
            s.run(None, feeds)  # the next run re-arms what a Ctrl-C left listed
            s.run(None, feeds, ro)
        except ortc.Error as exc:
            bad.setdefault(name, []).append(f"step {step}: {type(exc).__name__}: {exc}")
        ro.close()
        if not came:
            break
    steps[name] = step
try:
    endless.run(None, {"x": x}, timeout=0.2)
    after = "finished"
except ortc.RunTimeout:
    after = "RunTimeout"
print(json.dumps({"bad": {k: v[:3] for k, v in bad.items()}, "steps": steps, "after": after}))
'''


def test_an_interrupt_at_any_step_of_a_deadline_or_a_rearm_leaves_no_options_terminated(
        ) -> None:
    proc = run_python(_EVERY_STEP, timeout=170)
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["bad"] == {} and got["after"] == "RunTimeout", got
    assert got["steps"]["deadline"] > 20 and got["steps"]["rearm"] > 5, got  # it did step
