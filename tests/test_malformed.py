"""Malformed models: mutated model bytes must end in an ortc error or a working session.

Valid models (the fuzz models and one zoo case per operator) are mutated: bit flips, byte
overwrites, truncation, inserted/deleted/duplicated chunks, and protobuf-aware corruption of one
field (dimensions, element types, initializer data, op types, attributes, names, opset and IR
versions). Each case is loaded with ``ortc.Session``; a session that loads is run once with
generated inputs. Every case must end in an ``ortc.Error`` or a result, never a crash or another
exception type.

Cases run in child processes, a batch per child. Before a case the child appends its id to a
progress file, so when a child dies the parent knows the case in flight; it replays that case
alone in a fresh child (does it crash on its own, or only after earlier cases?), then continues
the batch in a new child. A crash inside ORT (the Python stack ends in the ortc line that calls
ORT) is an ORT finding: the offline run keeps its input under tests/data/malformed/ and lists it
in manifest.json; CI accepts exactly those. A crash anywhere else would be ortc's.

    python tests/test_malformed.py run --cases 20000 --seed 7 [--record]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
if ROOT not in sys.path:
    sys.path.append(ROOT)

DATA = os.path.join(HERE, "data", "malformed")
MANIFEST = os.path.join(DATA, "manifest.json")
CI_CASES = 5000
#: exceptions other than ortc.Error that ortc is known to raise for some malformed models, with
#: where they come from (reported, not ortc's to hide here): (start of the outcome, reason)
KNOWN_ORTC_ISSUES = [
    ("other ValueError: array is too big", "Session.run preallocates outputs from the declared "
     "shape (session.py _preallocate_outputs): numpy refuses an absurd one"),
    ("other _ArrayMemoryError", "as above, for a merely huge declared output shape"),
    ("other MemoryError", "as above"),
    ("other UnicodeDecodeError", "session.py _load_io decodes input/output names strictly (and "
     "leaks the name's buffer when that fails)"),
]
CI_SEED = 1
#: operators whose malformed attributes are known to abort ORT: not used as seeds
KNOWN_ABORTING_OPS = {"TfIdfVectorizer", "StringNormalizer"}

# -- seeds and mutations (parent side: needs onnx) -------------------------------------------


def seed_models() -> list[tuple[str, bytes]]:
    import numpy as np

    import models

    out = [
        ("add", models.add_model(np.float32, ["n"])), ("mlp", models.mlp_model(2, 8)),
        ("zipmap", models.zipmap_model()), ("seqat", models.sequence_at_model()),
        ("dictvec", models.dict_vectorizer_model()), ("opt", models.optional_input_model()),
        ("meta", models.metadata_model()), ("matmul", models.matmul_model()),
        ("symbolic", models.symbolic_dim_model()), ("split", models.split_to_sequence_model()),
        ("castmap", models.castmap_model()), ("overridable",
                                              models.overridable_initializer_model()),
    ]
    seen: set[str] = set()
    for case in models.zoo_cases():  # one case per operator, in the zoo's order
        op = case.name.split("_")[0]
        if op in seen or op in KNOWN_ABORTING_OPS:
            continue
        seen.add(op)
        out.append((case.name, case.model))
    return out


OP_NAMES = ["Add", "Relu", "MatMul", "Gemm", "Conv", "Reshape", "Gather", "Concat", "Slice",
            "Split", "Transpose", "Identity", "Cast", "Loop", "If", "Scan", "TopK", "Pad",
            "Expand", "Resize", "LSTM", "GRU", "Einsum", "NonMaxSuppression", "ScatterND",
            "ZipMap", "TreeEnsembleClassifier", "LabelEncoder", "SequenceAt", "Unique",
            "NoSuchOp", ""]
INTERESTING_INTS = [0, 1, -1, 2, 3, 7, 255, 65535, -2**31, 2**31 - 1, 2**32, -2**63, 2**63 - 1,
                    2**40, -7]


def _mutate_proto(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    import onnx

    m = onnx.ModelProto()
    m.ParseFromString(data)
    g = m.graph
    choice = rng.randrange(14)
    if choice == 0 and (list(g.input) + list(g.output) + list(g.value_info)):
        vi = rng.choice(list(g.input) + list(g.output) + list(g.value_info))
        t = vi.type.tensor_type
        if t.HasField("shape") and t.shape.dim:
            d = rng.choice(t.shape.dim)
            d.dim_value = rng.choice(INTERESTING_INTS)
            return f"dim of {vi.name} = {d.dim_value}", m.SerializeToString()
        t.elem_type = rng.randrange(0, 30)
        return f"elem_type of {vi.name} = {t.elem_type}", m.SerializeToString()
    if choice == 1 and (list(g.input) + list(g.output)):
        vi = rng.choice(list(g.input) + list(g.output))
        vi.type.tensor_type.elem_type = rng.randrange(0, 30)
        return f"elem_type of {vi.name}", m.SerializeToString()
    if choice == 2 and g.initializer:
        t = rng.choice(g.initializer)
        if t.dims:
            i = rng.randrange(len(t.dims))
            t.dims[i] = rng.choice(INTERESTING_INTS)
        else:
            t.dims.append(rng.choice(INTERESTING_INTS))
        return f"dims of initializer {t.name} = {list(t.dims)}", m.SerializeToString()
    if choice == 3 and g.initializer:
        t = rng.choice(g.initializer)
        if t.raw_data:
            t.raw_data = t.raw_data[:rng.randrange(len(t.raw_data))]
            return f"raw_data of {t.name} truncated", m.SerializeToString()
        t.data_type = rng.randrange(0, 30)
        return f"data_type of {t.name} = {t.data_type}", m.SerializeToString()
    if choice == 4 and g.initializer:
        t = rng.choice(g.initializer)
        t.data_type = rng.randrange(0, 30)
        return f"data_type of initializer {t.name} = {t.data_type}", m.SerializeToString()
    if choice == 5 and g.node:
        n = rng.choice(g.node)
        old, n.op_type = n.op_type, rng.choice(OP_NAMES)
        return f"op_type {old} -> {n.op_type}", m.SerializeToString()
    if choice == 6 and g.node:
        n = rng.choice(g.node)
        ints = [a for a in n.attribute if a.ints or a.type == onnx.AttributeProto.INT]
        if ints:
            a = rng.choice(ints)
            if a.ints:
                a.ints[rng.randrange(len(a.ints))] = rng.choice(INTERESTING_INTS)
                if rng.random() < 0.5:
                    del a.ints[rng.randrange(len(a.ints)):]
            else:
                a.i = rng.choice(INTERESTING_INTS)
            return f"attribute {n.op_type}.{a.name}", m.SerializeToString()
        if n.attribute:
            a = rng.choice(n.attribute)
            a.type = rng.randrange(0, 16)
            return f"attribute type of {n.op_type}.{a.name} = {a.type}", m.SerializeToString()
        n.attribute.add(name="axis", type=onnx.AttributeProto.INT, i=rng.choice(INTERESTING_INTS))
        return f"new attribute {n.op_type}.axis", m.SerializeToString()
    if choice == 7 and g.node:
        n = rng.choice(g.node)
        if n.attribute:
            a = rng.choice(n.attribute)
            floats_or_strings = list(a.floats) or list(a.strings)
            if a.floats:
                del a.floats[rng.randrange(len(a.floats)):]
            elif a.strings:
                del a.strings[rng.randrange(len(a.strings)):]
            else:
                n.attribute.remove(a)
                return f"attribute {n.op_type}.{a.name} removed", m.SerializeToString()
            return (f"attribute {n.op_type}.{a.name} shortened from {len(floats_or_strings)}",
                    m.SerializeToString())
    if choice == 8 and g.node:
        n = rng.choice(g.node)
        names = [x for nn in g.node for x in nn.input] + [i.name for i in g.input] + ["nope", ""]
        if n.input and rng.random() < 0.5:
            n.input[rng.randrange(len(n.input))] = rng.choice(names)
        elif n.output:
            n.output[rng.randrange(len(n.output))] = rng.choice(names)
        else:
            n.input.append(rng.choice(names))
        return f"an edge of {n.op_type} rewired", m.SerializeToString()
    if choice == 9 and g.node:
        n = rng.choice(g.node)
        if n.input and rng.random() < 0.5:
            del n.input[rng.randrange(len(n.input))]
        else:
            n.input.append(n.input[0] if n.input else "x")
        return f"input count of {n.op_type} changed", m.SerializeToString()
    if choice == 10 and m.opset_import:
        o = rng.choice(m.opset_import)
        o.version = rng.choice([1, 5, 9, 13, 17, 23, 30, 99, -1, 0])
        return f"opset {o.domain or 'ai.onnx'} = {o.version}", m.SerializeToString()
    if choice == 11:
        m.ir_version = rng.choice([0, 1, 3, 4, 7, 11, 12, 99, -1])
        return f"ir_version = {m.ir_version}", m.SerializeToString()
    if choice == 12 and len(g.node) > 1:
        nodes = list(g.node)
        rng.shuffle(nodes)
        del g.node[:]
        g.node.extend(nodes)
        return "nodes reordered", m.SerializeToString()
    if choice == 13 and g.node:
        n = rng.choice(g.node)
        n.domain = rng.choice(["ai.onnx.ml", "com.microsoft", "nope", "ai.onnx"])
        return f"domain of {n.op_type} = {n.domain}", m.SerializeToString()
    if g.output:
        del g.output[rng.randrange(len(g.output))]
        return "an output removed", m.SerializeToString()
    return "unchanged", data


def mutate(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    """One mutation of ``data``: (description, new bytes)."""
    b = bytearray(data)
    kind = rng.randrange(12)  # 6 byte-level kinds, then protobuf-aware ones (half the cases)
    if kind == 0:
        bits = rng.randint(1, 8)
        for _ in range(bits):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        return f"{bits} bit flips", bytes(b)
    if kind == 1:
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.randrange(256)])
        return "bytes overwritten", bytes(b)
    if kind == 2:
        cut = rng.randrange(1, len(b))
        return f"truncated to {cut} of {len(b)}", bytes(b[:cut])
    if kind == 3:
        i, n = rng.randrange(len(b)), rng.randint(1, 16)
        return "bytes inserted", bytes(b[:i] + bytes(rng.randrange(256) for _ in range(n)) + b[i:])
    if kind == 4:
        i = rng.randrange(len(b))
        return "bytes deleted", bytes(b[:i] + b[i + rng.randint(1, 16):])
    if kind == 5:
        i = rng.randrange(len(b))
        j = min(len(b), i + rng.randint(1, 64))
        return "a chunk duplicated", bytes(b[:j] + b[i:j] + b[j:])
    try:
        return _mutate_proto(rng, data)
    except Exception as exc:  # noqa: BLE001 - an unparsable seed cannot happen; be safe
        return f"proto mutation failed ({exc})", data


def make_cases(n: int, seed: int) -> list[tuple[int, str, bytes]]:
    """``n`` cases (id, description, bytes), a pure function of ``seed``."""
    seeds = seed_models()
    rng = random.Random(seed)
    out = []
    for i in range(n):
        name, data = seeds[i % len(seeds)]
        desc, mutated = mutate(rng, data)
        if rng.random() < 0.15:  # sometimes two mutations
            d2, mutated = mutate(rng, mutated or data)
            desc += "; " + d2
        out.append((i, f"{name}: {desc}", mutated))
    return out


# -- the child: load and run cases -----------------------------------------------------------

def _feeds(sess: Any) -> Optional[dict[str, Any]]:
    import numpy as np

    from ortc import ValueKind

    feeds: dict[str, Any] = {}
    for a in sess.inputs:
        if a.kind == ValueKind.OPTIONAL:
            feeds[a.name] = None
            continue
        if a.kind != ValueKind.TENSOR or a.dtype is None:
            return None
        shape = [d if isinstance(d, int) and d >= 0 else 2 for d in (a.shape or ())]
        size = 1
        for d in shape:
            size *= d
        if size > 1 << 20:
            return None
        if a.dtype == np.dtype(object):
            feeds[a.name] = np.full(shape, "a", dtype=object)
        else:
            feeds[a.name] = np.ones(shape, a.dtype)
    return feeds


def child(batch: str, progress: str) -> int:
    import faulthandler
    import logging
    import resource

    faulthandler.enable()
    logging.getLogger("ortc.ort").setLevel(logging.CRITICAL)
    # a malformed model may ask for terabytes: fail the allocation instead of the machine
    resource.setrlimit(resource.RLIMIT_AS, (24 << 30, resource.RLIM_INFINITY))
    import ortc

    with open(batch, "rb") as f:
        cases = pickle.load(f)
    fd = os.open(progress, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    for cid, data in cases:
        os.write(fd, f"S {cid}\n".encode())
        try:
            with ortc.Session(data, intra_op_num_threads=1) as s:
                outcome = "session"
                feeds = _feeds(s)
                if feeds is not None:
                    s.run(None, feeds, timeout=20)
                    outcome = "ran"
        except ortc.Error as exc:
            outcome = type(exc).__name__
        except BaseException as exc:  # noqa: BLE001 - any other exception is a finding
            outcome = f"other {type(exc).__name__}: {str(exc)[:200]}"
        os.write(fd, f"E {cid} {outcome}\n".encode())
    return 0


# -- the parent ------------------------------------------------------------------------------

@dataclass
class Result:
    cases: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    crashes: list[dict[str, Any]] = field(default_factory=list)
    others: list[str] = field(default_factory=list)
    known_issues: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def summary(self) -> str:
        top = ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items(), key=lambda kv: -kv[1]))
        return (f"{self.cases} cases in {self.seconds:.0f} s: crashes {len(self.crashes)}, "
                f"other exceptions {len(self.others)} (+ known ortc issues "
                f"{sum(self.known_issues.values())}); {top}")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [env.get("PYTHONPATH", ""), ROOT, HERE] if p)
    return env


def _spawn(cases: list[tuple[int, bytes]], workdir: str) -> tuple[subprocess.Popen[str], str]:
    fd, batch = tempfile.mkstemp(suffix=".pkl", dir=workdir)
    with os.fdopen(fd, "wb") as f:
        pickle.dump(cases, f)
    progress = batch + ".progress"
    p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "child", batch, progress],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_env())
    return p, progress


def _read_progress(path: str) -> tuple[dict[int, str], Optional[int]]:
    done: dict[int, str] = {}
    started: Optional[int] = None
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split(" ", 2)
                if len(parts) >= 2 and parts[0] == "S":
                    started = int(parts[1])
                elif len(parts) == 3 and parts[0] == "E":
                    done[int(parts[1])] = parts[2]
                    started = None
    return done, started


def _where(stderr: str) -> str:
    """'file.py function' of the innermost Python frame of the thread that crashed (from
    faulthandler's 'Current thread' block)."""
    lines = stderr.splitlines()
    for i, ln in enumerate(lines):
        if ln.startswith("Current thread"):
            for frame in lines[i + 1:]:
                frame = frame.strip()
                if frame.startswith("File "):
                    path = frame.split('"')[1]
                    return f"{os.path.basename(path)} {frame.rsplit(' in ', 1)[-1]}"
    return "?"


#: ortc functions whose innermost frame is a call into ORT with the model's own data
ORT_CALLS = {"session.py _create", "_status.py call_out", "_status.py call_into", "_run.py call",
             "_stage.py call", "_numpy_bridge.py tensor_shape_and_type", "typeinfo.py _convert",
             "typeinfo.py tensor_shape", "typeinfo.py read_node_args"}


def _is_ort(where: str) -> bool:
    return where in ORT_CALLS


def run_cases(cases: list[tuple[int, str, bytes]], jobs: int = 2, per_batch: int = 500,
              batch_timeout: float = 600, verbose: bool = False) -> Result:
    started = time.monotonic()
    res = Result()
    by_id = {cid: (desc, data) for cid, desc, data in cases}
    workdir = tempfile.mkdtemp(prefix="ortc-malformed-")
    queue = [[(cid, data) for cid, _, data in cases[i:i + per_batch]]
             for i in range(0, len(cases), per_batch)]
    running: list[tuple[subprocess.Popen[str], str, list[tuple[int, bytes]], float]] = []
    while queue or running:
        while queue and len(running) < jobs:
            batch = queue.pop(0)
            p, prog = _spawn(batch, workdir)
            running.append((p, prog, batch, time.monotonic()))
        time.sleep(0.02)
        for item in list(running):
            p, prog, batch, t0 = item
            if p.poll() is None:
                if time.monotonic() - t0 < batch_timeout:
                    continue
                p.kill()
            _, err = p.communicate()
            running.remove(item)
            done, inflight = _read_progress(prog)
            for cid, outcome in done.items():
                key = outcome if not outcome.startswith("other") else "other"
                res.outcomes[key] = res.outcomes.get(key, 0) + 1
                if outcome.startswith("other"):
                    known = [r for k, r in KNOWN_ORTC_ISSUES if outcome.startswith(k)]
                    if known:
                        res.known_issues[known[0]] = res.known_issues.get(known[0], 0) + 1
                    else:
                        res.others.append(f"case {cid} ({by_id[cid][0]}): {outcome}")
            res.cases += len(done)
            if p.returncode == 0:
                continue
            if inflight is None:  # died between cases: should not happen
                res.crashes.append({"id": None, "returncode": p.returncode, "stderr": err[-2000:]})
                continue
            desc, data = by_id[inflight]
            alone, _ = _replay_alone(data, workdir)
            crash = {"id": inflight, "mutation": desc, "returncode": p.returncode,
                     "alone": alone, "where": _where(err), "sha": _sha(data), "data": data,
                     "stderr": err[-2000:]}
            res.crashes.append(crash)
            res.cases += 1
            res.outcomes["crash"] = res.outcomes.get("crash", 0) + 1
            if verbose:
                print(f"crash: case {inflight} ({desc}) exit {p.returncode} at {crash['where']}; "
                      f"alone: {alone}", flush=True)
            rest = [c for c in batch if c[0] not in done and c[0] != inflight]
            if rest:
                queue.insert(0, rest)
    res.seconds = time.monotonic() - started
    shutil.rmtree(workdir, ignore_errors=True)  # crashed cases are kept in the Result
    return res


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _replay_alone(data: bytes, workdir: str) -> tuple[str, str]:
    """(outcome, where) of the case in a fresh child: 'crash (exit N)' or its outcome."""
    p, prog = _spawn([(0, data)], workdir)
    try:
        _, err = p.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return "hang", ""
    done, _ = _read_progress(prog)
    if p.returncode != 0:
        return f"crash (exit {p.returncode})", _where(err)
    return done.get(0, "?"), ""


def _onnxruntime_outcome(data: bytes) -> str:
    """What onnxruntime's own Python package does with the model (same inputs as ours): a
    crash there too shows the bug is ORT's."""
    code = (
        "import sys, numpy as np, onnxruntime as ort\n"
        "s = ort.InferenceSession(sys.stdin.buffer.read(), providers=['CPUExecutionProvider'])\n"
        "T = {'tensor(float)': np.float32, 'tensor(double)': np.float64,\n"
        "     'tensor(int64)': np.int64, 'tensor(int32)': np.int32, 'tensor(string)': object}\n"
        "f = {i.name: np.ones([d if isinstance(d, int) and d >= 0 else 2 for d in i.shape],\n"
        "     T.get(i.type, np.float32)) for i in s.get_inputs()}\n"
        "s.run(None, f)\n")
    try:
        p = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True,
                           timeout=300)
    except subprocess.TimeoutExpired:
        return "hang"
    if p.returncode < 0:
        return f"crash (signal {-p.returncode})"
    return "ok" if p.returncode == 0 else "error"


def load_manifest() -> dict[str, dict[str, Any]]:
    if not os.path.exists(MANIFEST):
        return {}
    with open(MANIFEST) as f:
        return json.load(f)


def record(crashes: list[dict[str, Any]]) -> None:
    """Keep each new crash's input under tests/data/malformed/ and list it."""
    manifest = load_manifest()
    os.makedirs(DATA, exist_ok=True)
    for c in crashes:
        if c.get("sha") is None or c["sha"] in manifest:
            continue
        name = c["sha"][:16] + ".onnx"
        with open(os.path.join(DATA, name), "wb") as f:
            f.write(c["data"])
        manifest[c["sha"]] = {"file": name, "mutation": c["mutation"]}
    _write_manifest(refresh(manifest))


def refresh(manifest: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Re-derive each finding's facts from its file: outcome alone, where it crashed, what
    onnxruntime's own package does with it."""
    workdir = tempfile.mkdtemp(prefix="ortc-findings-")
    for entry in manifest.values():
        with open(os.path.join(DATA, entry["file"]), "rb") as f:
            data = f.read()
        outcome, where = _replay_alone(data, workdir)
        entry.update(alone=outcome, where=where, in_ort=_is_ort(where), bytes=len(data),
                     onnxruntime=_onnxruntime_outcome(data))
    return manifest


def _write_manifest(manifest: dict[str, dict[str, Any]]) -> None:
    with open(MANIFEST, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


# -- pytest ----------------------------------------------------------------------------------

def test_malformed_models_never_crash_ortc() -> None:
    """5,000 mutated models: each ends in an ortc.Error or a session (that runs or fails
    cleanly); a crash is accepted only when it is a recorded ORT finding."""
    cases = make_cases(CI_CASES, CI_SEED)
    res = run_cases(cases, jobs=max(2, min(4, os.cpu_count() or 2)))
    print(res.summary())
    known = load_manifest()
    new = [c for c in res.crashes if c.get("sha") not in known]
    assert not new, "new crashes (run `python tests/test_malformed.py run --cases 5000 --seed 1 " \
                    "--record` to keep them if they are ORT's):\n" + "\n".join(
                        f"case {c.get('id')} {c.get('mutation')}: exit {c.get('returncode')} at "
                        f"{c.get('where')}\n{c.get('stderr', '')[-800:]}" for c in new)
    assert not res.others, "\n".join(res.others)
    assert res.cases == CI_CASES, res.summary()
    assert res.outcomes.get("ran", 0) > 0 and res.outcomes.get("InvalidProtobuf", 0) > 0


def test_recorded_findings_are_kept_and_replay() -> None:
    """Every finding listed in the manifest has its input file; each one still ends in a crash
    or an ortc.Error (never another exception or a hang); all of them are inside ORT."""
    manifest = load_manifest()
    workdir = tempfile.mkdtemp(prefix="ortc-findings-")
    for sha, entry in sorted(manifest.items()):
        path = os.path.join(DATA, entry["file"])
        with open(path, "rb") as f:
            data = f.read()
        assert _sha(data) == sha, path
        assert entry["in_ort"], entry
        outcome, _ = _replay_alone(data, workdir)
        assert outcome != "hang" and not outcome.startswith("other"), (entry, outcome)


def test_mutations_are_deterministic_and_varied() -> None:
    a = make_cases(60, 3)
    assert a == make_cases(60, 3)
    kinds = {desc.split(": ", 1)[1].split(" ")[0] for _, desc, _ in a}
    assert len(kinds) >= 8, kinds


# -- command line ----------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("child", help="(internal) run a batch of cases")
    c.add_argument("batch")
    c.add_argument("progress")
    r = sub.add_parser("run", help="mutate and run cases")
    r.add_argument("--cases", type=int, default=CI_CASES)
    r.add_argument("--seed", type=int, default=CI_SEED)
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    r.add_argument("--record", action="store_true", help="keep new ORT crashes in tests/data")
    sub.add_parser("refresh", help="re-derive the manifest's facts from the kept files")
    args = ap.parse_args(argv)
    if args.cmd == "child":
        return child(args.batch, args.progress)
    if args.cmd == "refresh":
        _write_manifest(refresh(load_manifest()))
        print(open(MANIFEST).read())
        return 0
    cases = make_cases(args.cases, args.seed)
    res = run_cases(cases, jobs=args.jobs, verbose=True)
    print(res.summary())
    for o in res.others:
        print("other exception:", o)
    known = load_manifest()
    for crash in res.crashes:
        tag = "known" if crash.get("sha") in known else "NEW"
        print(f"{tag} crash: case {crash.get('id')} ({crash.get('mutation')}) exit "
              f"{crash.get('returncode')} at {crash.get('where')}; alone: {crash.get('alone')}")
    if args.record:
        record(res.crashes)
    return 1 if res.others or any(c.get("sha") not in load_manifest() for c in res.crashes) \
        else 0


if __name__ == "__main__":
    sys.exit(main())
