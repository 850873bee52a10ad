"""Who owns an attribute given to the model editor's CreateNode.

The C reference says CreateNode copies the attributes it is given; ORT's C++ wrapper gives its
attributes up to the node on success. These checks settle it on each library: one builds a
model from a node with an attribute and reads back what CreateNode did with the caller's array
and whether the node kept the attribute's value; two release the attribute again afterwards
(right after CreateNode, and after AddNodeToGraph), each in a child process with freed memory
poisoned (:meth:`Ctx.poison_freed_memory`), since a release of what CreateNode already released
is a double free.

The node is a LeakyRelu whose ``alpha`` attribute (0.25) is not the operator's default (0.01):
a model that lost or misread the attribute gives another answer.

An attribute is a small block, which glibc keeps in its per-thread cache when freed, where
``M_PERTURB`` does not fill it: the freed attribute is not poisoned, only its first words are
overwritten by the cache's own links. So the first check also makes a second attribute right
after CreateNode, which takes the block just freed (same size, last freed, first reused), and
says whether it did. A second release crashes on every run, by SIGSEGV or SIGABRT ("double free
detected") from one run to the next: which one depends on a random per-process key glibc
writes into the freed block, which the attribute's destructor then reads.
"""

from __future__ import annotations

import struct
from typing import Any

from ...evidence import CXX_NODE, EDITOR_SRC, GH
from .._capi import Ctx, code_name, short
from .._registry import Fail, Known, check
from .lifetime import _poisoned
from .objects import EDITOR_API, _EDITOR, _float_type_info, _table
from .shared import _same_on_every_thread

#: what the two sources say of attributes given to CreateNode (they disagree: the checks decide)
_WHO_OWNS = (f"{EDITOR_API} (CreateNode copies the attributes); {CXX_NODE} (the node takes "
             "ownership of the attributes on success)")

#: ORT_OP_ATTR_FLOAT
_FLOAT = 3
_ALPHA = 0.25
_X = [-4.0, 2.0]
#: LeakyRelu(x) with alpha 0.25, and with the operator's default alpha 0.01
_WANT = [-1.0, 2.0]
_DEFAULT = [-0.04, 2.0]


def _attr(ctx: Ctx, alpha: float) -> Any:
    """A float attribute ``alpha`` made with CreateOpAttr (the caller's to release)."""
    ffi = ctx.ffi
    return ctx.out(ctx.api.CreateOpAttr, "OrtOpAttr*", b"alpha", ffi.new("float*", alpha), 1,
                   _FLOAT)


class _Parts:
    """A graph with input x and output y (float [2]) waiting for its node."""

    def __init__(self, ctx: Ctx, fn: dict[str, Any]) -> None:
        a, ffi = ctx.api, ctx.ffi
        ti = _float_type_info(ctx, fn, [2])
        try:
            x, y = (ctx.out(fn["CreateValueInfo"], "OrtValueInfo*", n, ti) for n in (b"x", b"y"))
        finally:
            a.ReleaseTypeInfo(ti)  # CreateValueInfo copies the type info
        self.graph = ctx.out(fn["CreateGraph"], "OrtGraph*")
        # the graph owns its inputs and outputs from here on
        ctx.ok(fn["SetGraphInputs"](self.graph, ffi.new("OrtValueInfo*[]", [x]), 1),
               "SetGraphInputs")
        ctx.ok(fn["SetGraphOutputs"](self.graph, ffi.new("OrtValueInfo*[]", [y]), 1),
               "SetGraphOutputs")
        self.names = [ffi.new("char[]", n) for n in (b"x", b"y")]  # alive during CreateNode


def _create_node(ctx: Ctx, fn: dict[str, Any], parts: _Parts, attrs: Any) -> Any:
    ffi = ctx.ffi
    return ctx.out(fn["CreateNode"], "OrtNode*", b"LeakyRelu", b"", b"leaky",
                   ffi.new("char*[]", parts.names[:1]), 1, ffi.new("char*[]", parts.names[1:]),
                   1, attrs, 1)


def _run(ctx: Ctx, fn: dict[str, Any], parts: _Parts) -> list[float]:
    """Put the graph (its node added) into a model, make a session from it (the model released
    at once: the session does not need it) and run it on x."""
    return _run_graph(ctx, fn, parts.graph, "x", _X, "y")


def _run_graph(ctx: Ctx, fn: dict[str, Any], graph: Any, feed: str, values: list[float],
               output: str) -> list[float]:
    """:func:`_run` for any graph of one float input ``feed`` and one output."""
    a, ffi = ctx.api, ctx.ffi
    domain = ffi.new("char[]", b"")
    model = ctx.out(fn["CreateModel"], "OrtModel*", ffi.new("char*[]", [domain]),
                    ffi.new("int[]", [17]), 1)
    try:
        ctx.ok(fn["AddGraphToModel"](model, graph), "AddGraphToModel")
        sess = ctx.out(fn["CreateSessionFromModel"], "OrtSession*", ctx.env, model,
                       ctx.options())
    finally:
        a.ReleaseModel(model)
    ctx.defer(a.ReleaseSession, sess)
    return ctx.read_floats(ctx.run(sess, {feed: ctx.floats(values)}, [output])[0])


def _close(got: list[float], want: list[float]) -> bool:
    return len(got) == len(want) and all(abs(g - w) < 1e-6 for g, w in zip(got, want))


def _answer(got: list[float]) -> str:
    if _close(got, _WANT):
        return f"alpha {_ALPHA}"
    if _close(got, _DEFAULT):
        return "the default alpha 0.01 (the attribute was lost)"
    return f"y = {got}"


@check("editor.create-node-takes-attributes", "The model editor's CreateNode takes the "
       "attributes it is given: on success it sets the caller's array entries to NULL (it has "
       "released the attributes), and the node keeps its own copy: a new attribute made in the "
       "memory just freed does not change it, and with freed memory poisoned the model built "
       "from the node runs with the attribute's value (LeakyRelu, alpha 0.25).",
       _WHO_OWNS,
       slots=("GetModelEditorApi", "CreateOpAttr"), child=True)
def create_node_takes_attributes(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    fn = _table(ctx, "GetModelEditorApi", _EDITOR)
    parts = _Parts(ctx, fn)
    poison = _poisoned(ctx)
    attr = _attr(ctx, _ALPHA)
    attrs = ffi.new("OrtOpAttr*[]", [attr])
    ctx.step(f"CreateNode with one attribute ({poison})")
    node = _create_node(ctx, fn, parts, attrs)
    taken = attrs[0] == ffi.NULL
    # the next attribute of the same size takes the block just freed, when CreateNode freed it:
    # a node that pointed at the caller's attribute would now read 0.75
    other = _attr(ctx, 0.75)
    reused = other == attr
    ctx.defer(a.ReleaseOpAttr, other)
    ctx.step("AddNodeToGraph, then a model, a session and a run")
    ctx.ok(fn["AddNodeToGraph"](parts.graph, node), "AddNodeToGraph")
    # the array's entry: NULL (nothing to release) when CreateNode took the attribute, else the
    # caller's attribute, released before the run, which then reads the node's copy
    a.ReleaseOpAttr(attrs[0])
    got = _run(ctx, fn, parts)
    memory = ("a new attribute (alpha 0.75) was made in the freed attribute's memory"
              if reused else "the freed attribute's memory was not reused by a new attribute")
    if not _close(got, _WANT):
        raise Fail(f"the model computes with {_answer(got)}; array entry "
                   f"{'NULL' if taken else 'left as it was'}; {memory} ({poison})")
    if not taken:
        raise Known("CreateNode left the caller's array entry as it was: the caller still "
                    "owns (and releases) its attribute here; the node keeps its own copy "
                    f"(the model computes with alpha {_ALPHA}; {poison})")
    return (f"CreateNode set the array entry to NULL (it released the caller's attribute); "
            f"{memory}; the model computes with alpha {_ALPHA} ({poison})")


def _release_again(ctx: Ctx, after_add: bool) -> str:
    """Release an attribute the caller passed to a successful CreateNode, right after it or
    after AddNodeToGraph, then build and run the model. The graph's inputs and outputs are set
    before CreateNode, so that nothing ORT allocates between CreateNode and the release takes
    the attribute's freed block (the release then meets the attribute itself, freed or not)."""
    a, ffi = ctx.api, ctx.ffi
    fn = _table(ctx, "GetModelEditorApi", _EDITOR)
    parts = _Parts(ctx, fn)
    poison = _poisoned(ctx)
    attr = _attr(ctx, _ALPHA)
    attrs = ffi.new("OrtOpAttr*[]", [attr])
    node = _create_node(ctx, fn, parts, attrs)
    taken = attrs[0] == ffi.NULL
    when = "after AddNodeToGraph" if after_add else "right after CreateNode"
    if after_add:
        ctx.ok(fn["AddNodeToGraph"](parts.graph, node), "AddNodeToGraph")
    ctx.step(f"CreateNode {'set' if taken else 'left'} the array entry "
             f"{'to NULL' if taken else 'as it was'}; ReleaseOpAttr on the attribute {when} "
             f"({poison})")
    a.ReleaseOpAttr(attr)
    ctx.step("released; building and running the model")
    if not after_add:
        ctx.ok(fn["AddNodeToGraph"](parts.graph, node), "AddNodeToGraph")
    got = _run(ctx, fn, parts)
    if not _close(got, _WANT):
        raise Fail(f"no crash, but the model computes with {_answer(got)} ({poison})")
    return (f"no crash ({poison}); CreateNode {'set' if taken else 'left'} the array entry "
            f"{'to NULL' if taken else 'as it was'}; the model computes with alpha {_ALPHA}")


@check("life.op-attr-release-after-create-node", "An OrtOpAttr passed to the model editor's "
       "CreateNode is still the caller's to release, as a copy would leave it: released right "
       "after a successful CreateNode, with freed memory poisoned, it does not crash the "
       "process, and the model built from the node runs with the attribute's value.",
       _WHO_OWNS,
       slots=("GetModelEditorApi", "CreateOpAttr"), crash=True)
def release_after_create_node(ctx: Ctx) -> str:
    return _release_again(ctx, after_add=False)


@check("life.op-attr-release-after-add-node", "An OrtOpAttr passed to the model editor's "
       "CreateNode is still the caller's to release once the node belongs to a graph: released "
       "after AddNodeToGraph, with freed memory poisoned, it does not crash the process, and the "
       "model built from the graph runs with the attribute's value.",
       f"{EDITOR_API} (CreateNode copies the attributes; the graph owns the nodes added to "
       f"it); {CXX_NODE} (the node takes ownership of the attributes on success)",
       slots=("GetModelEditorApi", "CreateOpAttr"), crash=True)
def release_after_add_node(ctx: Ctx) -> str:
    return _release_again(ctx, after_add=True)


# -- what a refused transfer leaves the caller ------------------------------------------------

#: the model editor's source at a commit whose AddNodeToGraph and AddGraphToModel return every
#: error before taking their argument (ortc.evidence.EDITOR_SRC), and the pull request that
#: made them refuse a node or a graph given twice
_REFUSALS = (f"{EDITOR_SRC} (a node already in a graph, a graph already in a model and a model "
             f"that already has a graph are refused before anything is taken); {GH}/pull/28123 "
             "(the change that made both calls refuse them)")


def _graph_with_node(ctx: Ctx, fn: dict[str, Any]) -> tuple[_Parts, Any]:
    """A graph (x -> LeakyRelu alpha 0.25 -> y) whose node is made but not yet added; an
    attribute CreateNode left in the caller's array is released (the node keeps its own copy:
    editor.create-node-takes-attributes)."""
    ffi = ctx.ffi
    parts = _Parts(ctx, fn)
    attrs = ffi.new("OrtOpAttr*[]", [_attr(ctx, _ALPHA)])
    node = _create_node(ctx, fn, parts, attrs)
    if attrs[0] != ffi.NULL:
        ctx.api.ReleaseOpAttr(attrs[0])
    return parts, node


@check("editor.add-node-twice-refused", "The model editor's AddNodeToGraph refuses a node the "
       "graph already holds, and the refusal takes nothing: the graph keeps the node once, and "
       "the model built from it runs and is released without a crash (a graph holding the node "
       "twice would release it twice).",
       _REFUSALS, slots=("GetModelEditorApi", "CreateOpAttr"), crash=True)
def add_node_twice_refused(ctx: Ctx) -> str:
    fn = _table(ctx, "GetModelEditorApi", _EDITOR)
    parts, node = _graph_with_node(ctx, fn)
    ctx.ok(fn["AddNodeToGraph"](parts.graph, node), "AddNodeToGraph")
    ctx.step("AddNodeToGraph again with the same node")
    refused = ctx.status(fn["AddNodeToGraph"](parts.graph, node))
    ctx.step("the node " + ("refused the second time" if refused else "accepted twice") +
             "; a model, a session, a run, then the model released")
    got = _run(ctx, fn, parts)
    if not _close(got, _WANT):
        raise Fail(f"the model computes with {_answer(got)}")
    if refused is None:
        raise Known("AddNodeToGraph accepted a node the graph already held, and releasing the "
                    "model did not crash here (the node is in the graph twice)")
    return f"refused ({code_name(refused[0])}: {short(refused[1])}); the model runs and is released"


@check("editor.add-graph-twice-refused", "The model editor's AddGraphToModel refuses a model "
       "that already has a graph, and the refusal takes nothing: the second graph is still the "
       "caller's to release, and the model keeps and runs its first graph.",
       _REFUSALS, slots=("GetModelEditorApi", "CreateOpAttr"), crash=True)
def add_graph_twice_refused(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    fn = _table(ctx, "GetModelEditorApi", _EDITOR)
    parts, node = _graph_with_node(ctx, fn)
    ctx.ok(fn["AddNodeToGraph"](parts.graph, node), "AddNodeToGraph")
    second = ctx.out(fn["CreateGraph"], "OrtGraph*")  # empty: a model with it cannot run
    domain = ffi.new("char[]", b"")
    model = ctx.out(fn["CreateModel"], "OrtModel*", ffi.new("char*[]", [domain]),
                    ffi.new("int[]", [17]), 1)
    try:
        ctx.ok(fn["AddGraphToModel"](model, parts.graph), "AddGraphToModel")
        ctx.step("AddGraphToModel again, with a second (empty) graph")
        refused = ctx.status(fn["AddGraphToModel"](model, second))
        if refused is not None:
            ctx.step("refused; the second graph released by the caller")
            a.ReleaseGraph(second)
        ctx.step("a session from the model, and a run")
        box = ffi.new("OrtSession**")
        made = ctx.status(fn["CreateSessionFromModel"](ctx.env, model, ctx.options(), box))
    finally:
        ctx.step("the model released")
        a.ReleaseModel(model)
    if made is None:
        ctx.defer(a.ReleaseSession, box[0])
        got = ctx.read_floats(ctx.run(box[0], {"x": ctx.floats(_X)}, ["y"])[0])
        outcome = f"the model computes with {_answer(got)}"
    else:
        got, outcome = [], f"no session from the model ({code_name(made[0])}: {short(made[1])})"
    if refused is None:
        raise Known(f"AddGraphToModel accepted a second graph for a model that had one; "
                    f"{outcome}")
    if not _close(got, _WANT):
        raise Fail(f"refused the second graph, but {outcome}")
    return (f"refused ({code_name(refused[0])}: {short(refused[1])}); the caller released the "
            f"second graph; the model runs its first")


@check("life.value-release-after-add-initializer", "An OrtValue given to the model editor's "
       "AddInitializerToGraph is still the caller's to release after the call succeeds, as a "
       "copy would leave it: released right after, with freed memory poisoned and its block "
       "taken by a new value, it does not crash the process, and the model built from the "
       "graph runs with the initializer's values.",
       f"{EDITOR_API} (ORT takes ownership of the value on success: the caller must not "
       f"release it); {GH}/pull/28123 (the graph copies the value, the caller keeps it); "
       f"{GH}/pull/28800 (the graph takes it again)",
       slots=("GetModelEditorApi",), crash=True)
def release_after_add_initializer(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    fn = _table(ctx, "GetModelEditorApi", _EDITOR)
    graph = _graph_a_to_z(ctx, fn, 2)
    value = ctx.floats([10.0, 20.0], release=False)
    ctx.ok(fn["AddInitializerToGraph"](graph, b"b", value, False), "AddInitializerToGraph")
    poison = _poisoned(ctx)
    ctx.step(f"ReleaseValue on the value after a successful AddInitializerToGraph ({poison})")
    a.ReleaseValue(value)
    # a value of the same size takes the block just freed (small blocks are not poisoned): a
    # graph that kept the caller's value would now read this one
    other = ctx.floats([100.0, 200.0])
    reused = other == value
    names = [ffi.new("char[]", n) for n in (b"a", b"b", b"z")]
    node = ctx.out(fn["CreateNode"], "OrtNode*", b"Add", b"", b"add",
                   ffi.new("char*[]", names[:2]), 2, ffi.new("char*[]", names[2:]), 1,
                   ffi.NULL, 0)
    ctx.ok(fn["AddNodeToGraph"](graph, node), "AddNodeToGraph")
    ctx.step("a model, a session and a run, then the model released")
    got = _run_graph(ctx, fn, graph, "a", [1.0, 2.0], "z")
    memory = ("a new value was made in the released value's memory" if reused
              else "the released value's memory was not reused by a new value")
    if not _close(got, [11.0, 22.0]):
        raise Known(f"no crash, but the model computes {got} ({memory}; {poison}): the graph "
                    "kept the value the caller released")
    return f"no crash ({poison}); {memory}; the model computes [11.0, 22.0]"


def _graph_a_to_z(ctx: Ctx, fn: dict[str, Any], n: int) -> Any:
    """A new graph whose input "a" and output "z" are float tensors of shape [n] (no nodes
    yet)."""
    ti = _float_type_info(ctx, fn, [n])
    try:
        a_in, z_out = (ctx.out(fn["CreateValueInfo"], "OrtValueInfo*", name, ti)
                       for name in (b"a", b"z"))
    finally:
        ctx.api.ReleaseTypeInfo(ti)
    graph = ctx.out(fn["CreateGraph"], "OrtGraph*")
    ffi = ctx.ffi
    ctx.ok(fn["SetGraphInputs"](graph, ffi.new("OrtValueInfo*[]", [a_in]), 1), "SetGraphInputs")
    ctx.ok(fn["SetGraphOutputs"](graph, ffi.new("OrtValueInfo*[]", [z_out]), 1),
           "SetGraphOutputs")
    return graph


# -- what a session made from a model needs of it ---------------------------------------------

#: elements of the external initializer: 8 KiB of floats, above the size glibc keeps in its
#: per-thread cache (so its freed block is poisoned) and above the 128 bytes ORT requires of an
#: initializer given as external data
_EXTERNAL_N = 2048


@check("editor.session-outlives-model", "A session made by CreateSessionFromModel does not need "
       "the model: the model released right after the call (freed memory poisoned, then a new "
       "tensor of the initializer's size made), the session still computes with the values of "
       "an ORT-allocated initializer the model held as external data (data_is_external: not "
       "copied into the graph, so the session uses that value's memory).",
       f"{EDITOR_API} (CreateSessionFromModel takes a const model; the model owns its graph "
       "and the initializers added to it); onnxruntime/core/session/model_editor_c_api.cc "
       "CreateSessionFromModel (loads the model into a new session, then initializes it)",
       slots=("GetModelEditorApi",), crash=True)
def session_outlives_model(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    fn = _table(ctx, "GetModelEditorApi", _EDITOR)
    n = _EXTERNAL_N
    graph = _graph_a_to_z(ctx, fn, n)
    # the initializer's memory is ORT's (the default allocator), so releasing the model that
    # owns the value frees it: a session pointing at it would then read freed memory
    dims = ffi.new("int64_t[]", [n])
    value = ctx.out(a.CreateTensorAsOrtValue, "OrtValue*", ctx.allocator, dims, 1, 1)
    b_vals = [1000.0 + i for i in range(n)]
    box = ffi.new("void**")
    ctx.ok(a.GetTensorMutableData(value, box), "GetTensorMutableData")
    ffi.memmove(box[0], struct.pack(f"<{n}f", *b_vals), 4 * n)
    block = box[0]
    ctx.ok(fn["AddInitializerToGraph"](graph, b"b", value, True), "AddInitializerToGraph")
    names = [ffi.new("char[]", s) for s in (b"a", b"b", b"z")]
    node = ctx.out(fn["CreateNode"], "OrtNode*", b"Add", b"", b"add",
                   ffi.new("char*[]", names[:2]), 2, ffi.new("char*[]", names[2:]), 1,
                   ffi.NULL, 0)
    ctx.ok(fn["AddNodeToGraph"](graph, node), "AddNodeToGraph")
    domain = ffi.new("char[]", b"")
    model = ctx.out(fn["CreateModel"], "OrtModel*", ffi.new("char*[]", [domain]),
                    ffi.new("int[]", [17]), 1)
    ctx.ok(fn["AddGraphToModel"](model, graph), "AddGraphToModel")
    sess = ctx.out(fn["CreateSessionFromModel"], "OrtSession*", ctx.env, model, ctx.options())
    ctx.defer(a.ReleaseSession, sess)
    poison = _poisoned(ctx)
    ctx.step(f"CreateSessionFromModel done; ReleaseModel ({poison})")
    a.ReleaseModel(model)
    # read back (in this child, a heap block stays mapped) whether the block still holds the
    # initializer: the session kept it alive, or it was freed (poisoned) with the model
    held = list(struct.unpack("<4f", ffi.buffer(ffi.cast("char*", block), 16)[:])) == b_vals[:4]
    # a tensor of the same size may take the initializer's block if the model's release freed it
    other = ctx.out(a.CreateTensorAsOrtValue, "OrtValue*", ctx.allocator, dims, 1, 1)
    ctx.defer(a.ReleaseValue, other)
    box2 = ffi.new("void**")
    ctx.ok(a.GetTensorMutableData(other, box2), "GetTensorMutableData")
    ffi.memmove(box2[0], struct.pack(f"<{n}f", *([-7.0] * n)), 4 * n)
    reused = box2[0] == block
    ctx.step("a new tensor made " + ("in the initializer's former block" if reused else
                                     "elsewhere") + "; Run")
    a_vals = [0.5 * i for i in range(n)]
    got = ctx.read_floats(ctx.run(sess, {"a": ctx.floats(a_vals)}, ["z"])[0])
    memory = ("the initializer's memory still held its values after the model's release: "
              "the session keeps the value alive" if held else
              "the initializer's memory no longer held its values after the model's release: "
              "freed with the model")
    memory += ("; a new tensor then took that block" if reused else
               "; a new tensor of its size went elsewhere")
    want = [x + y for x, y in zip(a_vals, b_vals)]
    if not _close(got, want):
        wrong = sum(not _close([g], [w]) for g, w in zip(got, want))
        raise Known(f"the session computes {wrong} of {n} values wrong after the model's "
                    f"release ({memory}; {poison}): keep the model until the session is "
                    "released")
    return f"the session computes a + b right after the model's release ({memory}; {poison})"


# -- the type-info constructors: copies or references of what they are given ----------------

#: the first five entries of the model editor's table (API 22): the type-info constructors
_TYPE_INFO_MAKERS = {
    "CreateTensorTypeInfo": (0, "OrtStatus*(*)(const OrtTensorTypeAndShapeInfo*, "
                                "OrtTypeInfo**)"),
    "CreateSparseTensorTypeInfo": (1, "OrtStatus*(*)(const OrtTensorTypeAndShapeInfo*, "
                                      "OrtTypeInfo**)"),
    "CreateMapTypeInfo": (2, "OrtStatus*(*)(ONNXTensorElementDataType, const OrtTypeInfo*, "
                             "OrtTypeInfo**)"),
    "CreateSequenceTypeInfo": (3, "OrtStatus*(*)(const OrtTypeInfo*, OrtTypeInfo**)"),
    "CreateOptionalTypeInfo": (4, "OrtStatus*(*)(const OrtTypeInfo*, OrtTypeInfo**)"),
}
#: ONNXType: tensor, sequence, map, sparse tensor, optional
_TENSOR, _SEQUENCE, _MAP, _SPARSE, _OPTIONAL = 1, 2, 3, 5, 6
#: element types: float, int8, int32, int64, string, double
_F32, _I8, _I32, _I64, _STR, _F64 = 1, 3, 6, 7, 8, 11


def _shape_info(ctx: Ctx, elem: int, dims: list[int]) -> Any:
    a, ffi = ctx.api, ctx.ffi
    shape = ctx.out(a.CreateTensorTypeAndShapeInfo, "OrtTensorTypeAndShapeInfo*")
    ctx.ok(a.SetTensorElementType(shape, elem), "SetTensorElementType")
    ctx.ok(a.SetDimensions(shape, ffi.new("int64_t[]", dims), len(dims)), "SetDimensions")
    return shape


def _describe(ctx: Ctx, info: Any) -> tuple[Any, ...]:
    """What the OrtApi getters read of a type info, nested infos included (each one a getter
    hands out is the reader's: released here)."""
    a, ffi = ctx.api, ctx.ffi
    kind = ffi.new("enum ONNXType*")
    ctx.ok(a.GetOnnxTypeFromTypeInfo(info, kind), "GetOnnxTypeFromTypeInfo")
    k = int(kind[0])
    if k in (_TENSOR, _SPARSE):
        tensor = ctx.out(a.CastTypeInfoToTensorInfo, "const OrtTensorTypeAndShapeInfo*", info)
        return (k, ctx.info_shape(tensor) if tensor != ffi.NULL else None)
    if k == _MAP:
        m = ctx.out(a.CastTypeInfoToMapTypeInfo, "const OrtMapTypeInfo*", info)
        key = ffi.new("ONNXTensorElementDataType*")
        ctx.ok(a.GetMapKeyType(m, key), "GetMapKeyType")
        inner = ctx.out(a.GetMapValueType, "OrtTypeInfo*", m)
    elif k == _SEQUENCE:
        s = ctx.out(a.CastTypeInfoToSequenceTypeInfo, "const OrtSequenceTypeInfo*", info)
        key, inner = None, ctx.out(a.GetSequenceElementType, "OrtTypeInfo*", s)
    elif k == _OPTIONAL:
        o = ctx.out(a.CastTypeInfoToOptionalTypeInfo, "const OrtOptionalTypeInfo*", info)
        key, inner = None, ctx.out(a.GetOptionalContainedTypeInfo, "OrtTypeInfo*", o)
    else:
        return (k,)
    try:
        return (k, int(key[0]) if key is not None else None, _describe(ctx, inner))
    finally:
        a.ReleaseTypeInfo(inner)


#: what each made info must read: its kind and, nested, what it was made from
_DOUBLE_4 = (_TENSOR, (_F64, [4]))
_TYPE_INFOS_WANT = {
    "tensor": (_TENSOR, (_F32, [2, 3])),
    "map": (_MAP, _STR, _DOUBLE_4),
    "optional": (_OPTIONAL, None, _DOUBLE_4),
    "sequence": (_SEQUENCE, None, (_MAP, _I64, _DOUBLE_4)),
}


@check("editor.type-info-constructors", "The model editor's type-info constructors "
       "(CreateTensorTypeInfo, CreateSparseTensorTypeInfo, CreateMapTypeInfo, "
       "CreateSequenceTypeInfo, CreateOptionalTypeInfo) copy what they are given: four threads "
       "at once each make a float [2, 3] tensor and sparse-tensor info from one shape info, a "
       "map (string to double [4]) and an optional from one tensor info, and a sequence of maps "
       "(int64 to double [4]); each input is then changed (int8 [7, 7] / int8 [7]) and released "
       "(freed memory poisoned), and the OrtApi getters read each made info as it was made, on "
       "every thread as on one.",
       f"{EDITOR_API} (each constructor takes const infos and hands back a new type info the "
       "caller releases)", slots=("GetModelEditorApi", "CastTypeInfoToOptionalTypeInfo"),
       child=True)
def type_info_constructors(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    fn = _table(ctx, "GetModelEditorApi", _TYPE_INFO_MAKERS)
    poison = _poisoned(ctx)

    def made(name: str, *args: Any) -> Any:
        return ctx.out(fn[name], "OrtTypeInfo*", *args, what=name)

    def change(shape: Any, dims: list[int]) -> None:
        ctx.ok(a.SetTensorElementType(shape, _I8), "SetTensorElementType")
        ctx.ok(a.SetDimensions(shape, ffi.new("int64_t[]", dims), len(dims)), "SetDimensions")

    def answers() -> dict[str, Any]:
        shape = _shape_info(ctx, _F32, [2, 3])
        infos = {"tensor": made("CreateTensorTypeInfo", shape),
                 "sparse": made("CreateSparseTensorTypeInfo", shape)}
        change(shape, [7, 7])  # an info that referred to the shape would read int8 [7, 7]
        a.ReleaseTensorTypeAndShapeInfo(shape)
        value_shape = _shape_info(ctx, _F64, [4])
        value = made("CreateTensorTypeInfo", value_shape)
        a.ReleaseTensorTypeAndShapeInfo(value_shape)
        infos["map"] = made("CreateMapTypeInfo", _STR, value)
        infos["optional"] = made("CreateOptionalTypeInfo", value)
        element = made("CreateMapTypeInfo", _I64, value)
        infos["sequence"] = made("CreateSequenceTypeInfo", element)
        # the tensor info inside ``value`` is an ordinary OrtTensorTypeAndShapeInfo handed out
        # const: changed through it, an info that referred to ``value`` would read int8 [7]
        change(ffi.cast("OrtTensorTypeAndShapeInfo*",
                        ctx.out(a.CastTypeInfoToTensorInfo, "const OrtTensorTypeAndShapeInfo*",
                                value)), [7])
        a.ReleaseTypeInfo(value)
        a.ReleaseTypeInfo(element)
        try:
            return {k: _describe(ctx, v) for k, v in infos.items()}
        finally:
            for info in infos.values():
                a.ReleaseTypeInfo(info)

    want = answers()
    wrong = {k: want[k] for k, w in _TYPE_INFOS_WANT.items() if want[k] != w}
    sparse = want["sparse"]
    if sparse[0] != _SPARSE or sparse[1] not in (None, (_F32, [2, 3])):
        wrong["sparse"] = sparse
    if wrong:
        raise Fail(f"read after the inputs were changed and released ({poison}): {wrong}")
    rounds = 30
    _same_on_every_thread(answers, want, rounds)
    return (f"4 threads x {rounds} rounds, each input changed and released right after the "
            f"calls that took it ({poison}): tensor float [2, 3], sparse tensor "
            + ("float [2, 3]" if sparse[1] else "(no tensor info through "
               "CastTypeInfoToTensorInfo)")
            + ", map string -> double [4], optional double [4], sequence of map int64 -> "
            "double [4]: all as made, as on one thread (the constructors copy their inputs)")
