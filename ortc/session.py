"""Inference sessions: construction, description, and the run entry points.

>>> sess = ortc.Session("model.onnx", intra_op_num_threads=1)        # doctest: +SKIP
>>> [y] = sess.run(None, {"x": np.ones((1, 3), np.float32)})          # doctest: +SKIP

The run entry points here are thin: each is its thread marker (the guard entries) around one
call of the run pipeline in :mod:`ortc._run`.
"""

from __future__ import annotations

import os
import stat
import sys
import time
import weakref
import _thread
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, NamedTuple, \
    NoReturn, Optional, Sequence, Tuple, TypeVar, cast

from . import _loader, _process
from ._cstr import UNSET, fspath
from ._enums import ElementType
from ._ffi import ffi
from ._guard import Entries, Guard, _returned
from ._handle import PYPY, Handle, live_count
from ._interrupt import MAIN_THREAD, main_thread_after_fork, watcher
from ._loader import Api
from ._run import RunEngine
from ._status import call_out, check, ignore
from .env import Env, get_env
from .errors import InvalidArgument, InvalidProtobuf, closest_name
from .memory import Allocator, MemoryInfo, cpu_memory_info, default_allocator
from .providers import provider_names, run_is_exclusive, session_run_rule
from .run_options import RunOptions
from .threads import exclusive, shared
from .typeinfo import NodeArg, read_node_args

if TYPE_CHECKING:
    from concurrent.futures import Future

    from .binding import IoBinding
    from .metadata import ModelMetadata
    from ._enums import ExecutionMode, GraphOptimizationLevel, LoggingLevel
    from ._numpy_bridge import RunOutput
    from .recipe import SessionRecipe
    from .session_options import SessionOptions, StrPath
    from .value import Value

__all__ = ["Session", "ModelSource"]

ModelSource = Any  # str | os.PathLike | bytes | bytearray | memoryview | a binary file object
T = TypeVar("T")

_get_ident = _thread.get_ident
_NULL = ffi.NULL


#: what is being built once (a Session rebuilt in a forked child or first used after
#: unpickling, keyed by the Session; the one ORT session of a recipe, by its key) -> the frames
#: of the calls that want it built, in the order they came (see _build_once). A forked child
#: starts with none: the parent's threads are not in it.
_builds: weakref.WeakKeyDictionary[Any, list[Any]] = weakref.WeakKeyDictionary()
_recipe_builds: dict[Any, list[Any]] = {}


def _after_fork() -> None:
    global MAIN_THREAD, _builds, _recipe_builds
    _builds = weakref.WeakKeyDictionary()
    _recipe_builds = {}
    MAIN_THREAD = main_thread_after_fork()  # a fork from another thread made it the main one


_process.at_fork(_after_fork, __name__, _builds=_process.EMPTIED, _recipe_builds=_process.EMPTIED,
                 MAIN_THREAD=_process.RESET)


def _build_once(claims: list[Any], done: Callable[[], bool], build: Callable[[], None]) -> None:
    """``build()`` unless ``done()``, by one thread at a time among those that share
    ``claims``: each lists its call's frame there, the first listed builds, the others wait
    and find it done (or, when that build failed, the next one listed builds). No lock: one
    that a signal handler's exception left held on the main thread would stop every later
    first use; a claim whose frame has returned (a build or a wait that an exception ended
    before its claim was taken back) is dropped by whoever finds it first in line."""
    # (the frame is never kept in a local of its own: a reference cycle through its locals
    # would keep what the build replaced alive until the collector runs)
    claims.append(sys._getframe())
    try:
        while not done():
            first = claims[0]  # (never empty: this call's claim is listed)
            if first is sys._getframe():
                del first  # (not kept: a local holding its own frame is such a cycle)
                build()
                return
            if _returned(first):
                try:
                    claims.remove(first)
                except ValueError:  # another waiter dropped it
                    pass
            else:
                time.sleep(0.0005)
            del first
    finally:
        try:
            claims.remove(sys._getframe())
        except ValueError:
            pass

#: recipe key (model path, content digest, options) -> a weak reference to the one ORT session
#: this process built for it, which every unpickled Session of that recipe uses (see
#: SharedSession); the last of them to go releases it. A forked child starts empty: the
#: parent's sessions are unusable there.
_shared: dict[Any, Any] = _process.emptied(__name__, "_shared", {})

#: the shared ORT session whose last unpickled Session went most recently, kept (one, at most)
#: so that a worker whose tasks each bring the Session anew and let it go (a pool's, which
#: drops a task's arguments when it ends) does not build and hash the model for every task;
#: let go when another recipe's takes its place, by :func:`release_idle` (``ortc.batch.forget``)
#: and at exit. A forked child starts with none (the parent's is unusable there).
_idle: list[Any] = _process.emptied(__name__, "_idle", [])


class _Borrow:
    """An unpickled Session's hold on the shared ORT session it runs on: when the Session lets
    it go (closed or collected), the session becomes the process's idle one (``_idle``)."""

    __slots__ = ("core", "pid")

    def __init__(self, core: SharedSession) -> None:
        self.core = core
        self.pid = os.getpid()

    def __del__(self) -> None:
        core = self.core
        # not in a forked child (the parent's session is unusable there); one list store,
        # atomic: the one it replaces is released here, whichever thread parks last wins
        if self.pid == os.getpid() and not core.closed:
            if _idle:
                _idle[0] = core
            else:
                _idle.append(core)
            del _idle[1:]  # (two threads appending at once)


def release_idle() -> int:
    """Let go of the idle shared session (released once no Session uses it); how many (0, 1)."""
    n = len(_idle)
    _idle.clear()
    return n


def model_source(model: Any) -> tuple[Any, str | None, bytes | None]:
    """(what to hand ORT, recipe path, recipe bytes) for a Session's ``model`` argument.

    A path is kept as an absolute path and not read. ``bytes`` are kept by reference; a file
    object is read once and its bytes used for both; a bytearray or memoryview (mutable or
    borrowed) is copied once into bytes, which ORT then reads too. The bytes returned are the
    ones ORT is given and the session keeps: ORT may read them after creation (the session
    config keys that use an ORT-format model's bytes in place).
    """
    if isinstance(model, (str, os.PathLike)):
        path = os.fsdecode(os.fspath(model))
        return model, os.path.abspath(path), None
    if hasattr(model, "read") and not isinstance(model, (bytes, bytearray, memoryview)):
        model = model.read()
        if not isinstance(model, (bytes, bytearray, memoryview)):  # a str is no path here
            raise TypeError(f"the model's file object must be binary (open it with 'rb'): "
                            f"its read() returned {type(model).__name__}")
    if isinstance(model, bytes):
        return model, None, model
    if isinstance(model, (bytearray, memoryview)):
        data = bytes(model)
        return data, None, data
    return model, None, None  # Session._create names the bad type


#: what a session's thread pool is counted as for PyPy's collector: 1 MiB a CPU (ORT's default
#: intra-op pool has a thread per core; a thread's stack is reserved, if little of it is used)
_POOL_BYTES = (os.cpu_count() or 1) << 20


def _held_bytes(path: str | None, data: bytes | None) -> int:
    """About how much native memory a session holds, for PyPy's collector (see
    ``_handle.PYPY``; 0 on CPython): twice its model (the weights, and the copies ORT
    prepacks: 15.8 MB a session for an 8.4 MB MLP), and its thread pool."""
    if not PYPY:
        return 0
    try:
        n = len(data) if data is not None else os.path.getsize(path) if path is not None else 0
    except OSError:
        n = 0
    return 2 * n + _POOL_BYTES


#: Session()'s option keywords, in the order its signature lists them
_SESSION_KEYWORDS = ("intra_op_num_threads", "inter_op_num_threads", "execution_mode",
                     "graph_optimization_level", "optimized_model_filepath", "enable_profiling",
                     "profile_file_prefix", "enable_mem_pattern", "enable_cpu_mem_arena",
                     "logid", "log_severity_level", "log_verbosity_level",
                     "use_deterministic_compute")


def _session_from_recipe(recipe: SessionRecipe) -> Session:
    """Unpickling a Session: a Session over its (already type-checked) recipe, built on its
    first use, from the ORT session this process keeps for that recipe (see SharedSession)."""
    return Session._unbuilt(recipe)


def _shared_session(recipe: SessionRecipe) -> SharedSession:
    """The ORT session this process keeps for ``recipe`` (by model path, content digest and
    options), built now if none is alive: one build per key (_build_once)."""
    from .recipe import verify_model

    digest = verify_model(recipe) if recipe.model_digest is None else recipe.model_digest
    key = (recipe.model_path, digest, recipe.options)

    def alive() -> SharedSession | None:
        ref = _shared.get(key)
        core = ref() if ref is not None else None
        if core is None or core.closed:
            return None
        # the key holds the model, not its external data: a session that read other files
        # (replaced since, or another folder's, for a model from bytes) is not this recipe's
        # here and now
        external = core._external
        return core if external is None or external.unchanged() else None

    made: list[SharedSession] = []  # what this thread built (the table keeps a weak reference)

    def build() -> None:
        core = cast(SharedSession, SharedSession.from_recipe(recipe, verify_bytes=True))
        made.append(core)
        _share(key, core)

    while True:
        found = alive()
        if found is not None:
            return found
        _build_once(_recipe_builds.setdefault(key, []), lambda: alive() is not None, build)
        if made:
            return made[0]


def _share(key: Any, session: Session) -> None:
    """Make ``session`` the one this process uses for ``key`` (weakly)."""
    import weakref

    def forget(dead: Any, key: Any = key) -> None:
        if _shared.get(key) is dead:
            _shared.pop(key, None)

    _shared[key] = weakref.ref(session, forget)


def _provider_entries(providers: Any) -> list[tuple[str, Mapping[str, Any] | None]]:
    """``providers`` as (name, options or None) pairs, or TypeError naming the entry that is
    neither a name nor a (name, options dict) pair (a str alone would be read as its letters)."""
    if providers is None:
        return []
    if isinstance(providers, (str, bytes)) or not isinstance(providers, Iterable):
        raise TypeError(f"providers must be a list of provider names or (name, options dict) "
                        f"pairs, not {type(providers).__name__} {providers!r}")
    if isinstance(providers, Mapping):  # its iteration gives the names alone: options dropped
        raise TypeError(f"providers must be a list of provider names or (name, options dict) "
                        f"pairs, not {type(providers).__name__} (a dict's pairs: "
                        f"list(providers.items()))")
    entries: list[tuple[str, Mapping[str, Any] | None]] = []
    named: dict[str, Any] = {}  # full name -> the options it was first given
    for p in providers:
        if isinstance(p, str):
            entry: tuple[str, Mapping[str, Any] | None] = (p, None)
        elif (isinstance(p, (tuple, list)) and len(p) == 2 and isinstance(p[0], str)
              and (p[1] is None or isinstance(p[1], Mapping))):
            entry = (p[0], p[1])
        else:
            raise TypeError(f"providers entry {p!r}: expected a provider name or a "
                            f"(name, options dict) pair")
        # a provider named twice with other options: the last would silently replace the first
        full = provider_names(entry[0])[1]
        given = {k: str(v) for k, v in (entry[1] or {}).items()}
        if named.setdefault(full, given) != given:
            raise InvalidArgument(f"providers: {full} is named twice, with other options "
                                  f"({named[full]!r}, then {given!r}): name it once")
        entries.append(entry)
    return entries


def _check_given_initializers(model: str | bytes | bytearray,
                              given: list[tuple[str, Any, int]]) -> None:
    """Refuse initializers the model does not have, or has with another element type or
    shape: ORT ignores the first, computes another graph with the second and reads the third
    as the declared type, past the end of a smaller buffer (see ortc._model_proto)."""
    from ._model_proto import declared_initializers

    try:
        if isinstance(model, str):
            import mmap

            with open(model, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                with memoryview(m) as view:
                    declared = declared_initializers(view)
        else:
            declared = declared_initializers(model)
    except (OSError, ValueError):  # ProtoError, an empty file: ORT says what is wrong
        return
    for name, array, element_type in given:
        there = declared.get(name)
        if there is None:
            raise InvalidArgument(f"{closest_name(name, declared, 'initializer')} (the model "
                                  f"has none of that name: ORT would ignore it)")
        want_type, want_dims = there
        if want_type != element_type or tuple(want_dims) != tuple(array.shape):
            raise InvalidArgument(
                f"initializer {name!r}: the model declares {_type_name(want_type)} "
                f"{list(want_dims)}, given {_type_name(element_type)} {list(array.shape)} (ORT "
                f"would read it as the declared type and shape)")


#: the session config entry that names the folder of a model's external data files (a model
#: from bytes; newer libraries use it for a model from a path too)
EXTERNAL_DATA_FOLDER_KEY = "session.model_external_initializers_file_folder_path"
#: the location ORT reads as "the data is at the memory address in ``offset``"
_MEMORY_ADDRESS_TAG = "*/_ORT_MEM_ADDR_/*"


class ExternalData(NamedTuple):
    """The external-data files a session read when it was made: the model's locations, where
    they resolve and what each file was then (:func:`_file_identity`)."""

    locations: tuple[str, ...]
    #: the model's absolute path (None: from bytes, whose locations resolve in the current
    #: folder)
    model_path: str | None
    named_folder: str | None
    files: tuple[tuple[str, tuple[int, ...] | None], ...]

    def unchanged(self) -> bool:
        """Whether a session made now, here, would read the same files: each location
        resolves to the same path (a model from bytes reads the current folder's), and each
        file is the same file, as it was (device, inode, size, modification time)."""
        return _external_files(self.model_path, self.locations, self.named_folder) == \
            self.files


def _external_files(model_path: str | None, locations: tuple[str, ...],
                    named_folder: str | None) -> tuple[tuple[str, tuple[int, ...] | None], ...]:
    """Each of ``locations`` in each folder ORT may read it from now, and that file's
    identity."""
    return tuple((target, _file_identity(target))
                 for folder in _data_folders(model_path, named_folder)
                 for location in locations
                 for target in (os.path.abspath(os.path.join(folder, location)),))


def _data_folders(model_path: str | None, named_folder: str | None) -> list[str]:
    """Where ORT looks for external data (absolute): beside a model from ``model_path``, in
    the current folder for one from bytes (None); also in the folder the options name."""
    folders = [os.path.dirname(os.path.abspath(model_path)) if model_path is not None
               else os.getcwd()]
    if named_folder:
        folders.append(os.path.abspath(named_folder))
    return folders


def _check_external_data(model: str | bytes | bytearray, named_folder: str | None
                         ) -> ExternalData | None:
    """Refuse a model whose tensors keep their data in a file outside the folders ORT may
    read it from (the model's folder for a model from a path, the current folder for one
    from bytes; either way also the folder ``named_folder`` names), whatever the library's
    own checks (ORT checks locations only from 1.25.1); else the files it reads, or None when
    it has no external data. The walk never reads tensor data: a model without external data
    costs a search of its small messages (ortc._model_proto)."""
    data: Any = model
    if isinstance(model, str):
        try:  # non-blocking: a path swapped for a FIFO since its check must not hang here
            fd = os.open(model, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            return None  # ORT names the problem
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise InvalidArgument(f"model path {model!r} is not a regular file")
            if st.st_size <= 1 << 16:
                data = os.read(fd, st.st_size)  # a small file: cheaper read than mapped
            else:
                import mmap

                data = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)
    try:
        if data[4:8] == b"ORTM":  # an ORT-format model (flatbuffers) has no external data
            return None
        if len(data) <= 1 << 16 and data.find(b"location") == -1:
            return None  # a small model without one (the reader is not even imported)
        from ._model_proto import ProtoError, external_locations

        try:
            located = external_locations(data)
        except ProtoError as exc:
            if data.find(b"location") == -1:
                return None  # no external data: ORT names what is wrong
            raise InvalidProtobuf(f"the model is not a well-formed ONNX protobuf ({exc}); "
                                  f"its external data could not be checked") from None
    finally:
        if not isinstance(data, (bytes, bytearray)):
            data.close()
    if not located:
        return None
    model_path = os.path.abspath(model) if isinstance(model, str) else None
    named = os.path.abspath(named_folder) if named_folder else None
    folders = _data_folders(model_path, named)
    for name, location in located:
        why = _location_problem(location, folders)
        if why is not None:
            raise InvalidArgument(
                f"tensor {name!r}: external data location {location!r} {why}: refused (ortc "
                f"lets a model read only files inside its folder, "
                f"{folders[0] if len(folders) == 1 else ' and '.join(folders)})")
    locations = tuple(sorted({location for _, location in located}))
    return ExternalData(locations, model_path, named, _external_files(model_path, locations,
                                                                      named))


def _location_problem(location: str, folders: list[str]) -> str | None:
    """Why ORT must not read the external data file ``location`` (relative to each of
    ``folders``), or None."""
    if "\0" in location:
        return "holds a NUL byte"
    if _MEMORY_ADDRESS_TAG in location:
        return "is ORT's tag for data at a memory address"
    if os.path.isabs(location):
        return "is an absolute path"
    normal = os.path.normpath(location)
    if normal == os.pardir or normal.startswith(os.pardir + os.sep):
        return "leaves its folder ('..')"
    for folder in folders:
        base = os.path.realpath(folder)
        target = os.path.realpath(os.path.join(folder, location))
        if os.path.commonpath([base, target]) != base:
            return f"resolves to {target!r} (through a symbolic link), outside {base!r}"
        try:
            mode = os.stat(target).st_mode
        except OSError:
            continue  # a missing file: ORT names it
        if not stat.S_ISREG(mode):  # a FIFO would block ORT's read forever
            return "is not a regular file"
    return None


def _type_name(element_type: int) -> str:
    try:
        return ElementType(element_type).name
    except ValueError:
        return f"element type {element_type}"


#: what a session was made with: (the OptionsRecipe fields, providers, provider options), or
#: None for ORT's default options
Made = Optional[Tuple[Tuple[Any, ...], List[str], Dict[str, Dict[str, str]]]]


def _create_session(api: Api, env: Env, model: ModelSource, options: SessionOptions | None,
                    providers: list[tuple[str, Mapping[str, Any] | None]],
                    option_kwargs: dict[str, Any]
                    ) -> tuple[Any, tuple[Any, ...], Made, ExternalData | None]:
    """Create the OrtSession; returns (raw session, what it must keep alive, what it was made
    with, the external-data files it read). ``providers``: the entries _provider_entries
    read.

    With keywords or providers, the session is made from a temporary copy of ``options``. The
    references ORT keeps into the options (initializer values, their name buffers) are taken
    over here, right after creation and before that copy is closed: this function is the only
    code that sees the copy, so the order cannot go wrong. Keywords alone (no options, no
    providers) are applied to a bare ORT options object (bare_options: the same for the same
    settings), which nothing refers to after ORT read it.
    """
    if options is not None or option_kwargs or providers:
        # imported here: a session with ORT's default options has no use for them (0.4 ms of a
        # cold start)
        from .session_options import _SETTINGS, SessionOptions, bare_options

        if options is None and not providers and all(k in _SETTINGS for k in option_kwargs):
            bare = bare_options(api, option_kwargs)
            entries = Entries(sys._getframe(), "Session()")
            try:
                entries.enter(env)  # in use (shared) while ORT creates the session
                raw, external = Session._create(api, env, model, bare._ptr)
            finally:
                entries.leave()
            return raw, (), (bare.frozen, [], {}), external
    if options is not None:
        if not isinstance(options, SessionOptions):
            if isinstance(options, (list, tuple)):  # Session(model, ["CPUExecutionProvider"])
                raise TypeError(f"options must be an ortc.SessionOptions, not "
                                f"{type(options).__name__}: providers are keyword-only, "
                                f"Session(model, providers={list(options)!r})")
            raise TypeError(f"options must be an ortc.SessionOptions (or keyword arguments), "
                            f"not {type(options).__name__}")
        options._check_open()
    temporary = None
    if option_kwargs or providers:
        temporary = options.clone() if options is not None else SessionOptions()
    try:
        if temporary is not None:
            temporary._update(option_kwargs)
            for name, provider_options in providers:
                temporary.append_execution_provider(name, provider_options)
            options = temporary
        entries = Entries(sys._getframe(), "Session()")
        try:
            # the env and the options are in use (shared) while ORT creates the session
            entries.enter(env)
            given = folder = None
            if options is not None:
                entries.enter(options)
                record = options._record
                given = [*record.initializers, *(i for call in record.external for i in call)]
                folder = record.config.get(EXTERNAL_DATA_FOLDER_KEY)
            raw, external = Session._create(
                api, env, model, options._ptr if options is not None else _NULL, given, folder)
        finally:
            entries.leave()
        if options is None:
            return raw, (), None, external
        # the session refers to the initializer values too: it holds them as its parents
        taken = (*(options._held or ()), *options._keep)
        # (read from the record, not the ORT object: a temporary copy is closed next)
        return raw, taken, (options._record.freeze(options._values, options._providers,
                                                   options._provider_options),
                            options.providers, dict(options._provider_options)), external
    finally:
        if temporary is not None:
            temporary.close()


def _file_identity(path: str) -> tuple[int, ...] | None:
    """Which file ``path`` is and what it was (device, inode, size, modification time), or
    None when it cannot be read (ORT then names the problem)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the path (refused by _create)
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


#: a session's inputs, outputs, overridable initializers and run engine
Description = Tuple[List[NodeArg], List[NodeArg], List[NodeArg], RunEngine]

#: the descriptions of sessions made from bytes with ORT's defaults or with options that are
#: plain data (settings, config entries, free-dimension overrides, per-session threads,
#: providers and their options: the options' recipe; no initializers or custom-op libraries,
#: no ORT_LOAD_CONFIG_FROM_MODEL=1), by model and options: what ORT describes depends on nothing
#: else, so a session made again from one model (a session per task or per operator) shares
#: the first one's description and run engine instead of reading them from ORT again. The key
#: holds the model's bytes and compares them, so only the same model finds an entry (a model
#: file is not keyed: it could change between a check and ORT's read). The run engine's caches
#: are content-keyed (name arrays, output lists), as safe to share between sessions as between
#: one session's threads; the OrtValues over caller memory are every session's already
#: (ortc/_run.py, ``_value_caches``).
_DESCRIPTIONS: dict[Any, Description] = {}
#: where the custom-op libraries are among the fields OptionsRecord.freeze makes (an
#: OptionsRecipe's, in order)
_FROZEN_LIBRARIES = 5
_DESCRIPTIONS_MAX = 32
#: the largest model kept as a key (the cache then holds at most 2 MiB of models); a larger
#: model's description is read from ORT for every session, whose creation dwarfs the reading
_BYTES_KEY_MAX = 1 << 16


def _described(api: Api, io: tuple[list[NodeArg], list[NodeArg], list[NodeArg]]
               ) -> Description:
    return (*io, RunEngine(api, *io))


def _description_key(data: bytes | None, options: Any) -> Any:
    """The _DESCRIPTIONS key of a session made from ``data`` with ``options`` (the fields of
    its options' recipe, or () for ORT's defaults), or None when it has none (a model from a
    file, a large model, initializers among the options)."""
    if data is None or len(data) > _BYTES_KEY_MAX:
        return None
    key = (data, options)
    try:
        hash(key)  # (an initializer's array is no key)
    except TypeError:
        return None
    return key


class _IoOnFirstUse:
    """A Session attribute read from ORT on its first use (the inputs, outputs, overridable
    initializers, the run engine): the read stores them all in the instance, whose attribute
    then hides this descriptor (a plain attribute read from then on: the run path pays
    nothing)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        obj._io_on_first_use()
        return obj.__dict__[self.name]


class _RunRule:
    """Session._run_exclusive, worked out on first use (a run's guard entry) and kept in the
    instance: Run is shared only when every provider of the session allows concurrent runs
    (thread_rules' answer; the same whichever thread asks first)."""

    __slots__ = ()

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        exclusive = run_is_exclusive(obj._providers, obj._provider_options)
        obj.__dict__["_run_exclusive"] = exclusive
        return exclusive


class Session(Handle):
    """A model loaded for inference.

    >>> sess = ortc.Session(model_bytes)                              # doctest: +SKIP
    >>> sess.inputs[0].name, sess.inputs[0].shape                     # doctest: +SKIP
    ('x', ('batch', 3))
    >>> sess.run(None, {"x": np.zeros((2, 3), np.float32)})           # doctest: +SKIP

    ``model`` is a path, the model's bytes, or a binary file object. ``options`` is a
    :class:`SessionOptions`; keyword arguments set options too (on a copy of ``options``).
    ``providers`` lists execution providers by name, or as (name, options dict) pairs.

    Thread rules: Send and Sync. ``run`` and the other run methods are shared when every
    execution provider of the session allows concurrent runs (the CPU provider does), else
    exclusive; see :meth:`thread_rules`. ``end_profiling`` is exclusive. The session keeps the
    Env alive; IoBindings and allocators made from it keep the session alive.

    Processes: a session pickles as its :meth:`recipe` (what it was built from) and unpickles
    as a new, equal session; one made before ``fork()`` is rebuilt from its recipe on its first
    use in the child.
    """

    c_type = "OrtSession"
    send = True
    sync = True
    parents = ("OrtEnv",)
    #: made by unpickling: built on first use, over this process's session of its recipe
    _unpickled = False
    if TYPE_CHECKING:
        _run_exclusive: bool
        _inputs: list[NodeArg]
        _outputs: list[NodeArg]
        _initializers: list[NodeArg]
        _engine: RunEngine
    else:  # read on first use (see _io_on_first_use)
        _run_exclusive = _RunRule()
        _inputs = _IoOnFirstUse("_inputs")
        _outputs = _IoOnFirstUse("_outputs")
        _initializers = _IoOnFirstUse("_initializers")
        _engine = _IoOnFirstUse("_engine")
    #: made from bytes with options that are plain data (see _DESCRIPTIONS): its description
    #: may be shared
    _describable = False
    evidence = ("several threads may call Run on one session (per execution provider); it "
                "must outlive its bindings, allocators and the values they allocate")

    def __init__(self, model: ModelSource, options: SessionOptions | None = None,
                 *positional: NoReturn,
                 providers: Sequence[str | tuple[str, Mapping[str, str | int | float]]]
                 | None = None,
                 intra_op_num_threads: int = UNSET, inter_op_num_threads: int = UNSET,
                 execution_mode: ExecutionMode | int = UNSET,
                 graph_optimization_level: GraphOptimizationLevel | int = UNSET,
                 optimized_model_filepath: StrPath = UNSET, enable_profiling: bool = UNSET,
                 profile_file_prefix: StrPath = UNSET, enable_mem_pattern: bool = UNSET,
                 enable_cpu_mem_arena: bool = UNSET, logid: str = UNSET,
                 log_severity_level: LoggingLevel | int = UNSET, log_verbosity_level: int = UNSET,
                 use_deterministic_compute: bool = UNSET, **unknown: NoReturn) -> None:
        # the keywords are SessionOptions' (same names and types), set on a copy of
        # ``options``; ``unknown`` is typed NoReturn so that a type checker flags a misspelt one
        if positional:  # onnxruntime's InferenceSession(path, opts, providers) habit
            raise TypeError("Session() takes the model and SessionOptions positionally; "
                            "providers are keyword-only: Session(model, options, "
                            "providers=[...])")
        # (in _SESSION_KEYWORDS' order; tests/test_session.py checks each lands on its name)
        option_kwargs = {name: value for name, value in zip(_SESSION_KEYWORDS, (
            intra_op_num_threads, inter_op_num_threads, execution_mode, graph_optimization_level,
            optimized_model_filepath, enable_profiling, profile_file_prefix, enable_mem_pattern,
            enable_cpu_mem_arena, logid, log_severity_level, log_verbosity_level,
            use_deterministic_compute)) if value is not UNSET}
        if unknown:
            option_kwargs.update(unknown)
        self._api = api = _loader.api()
        env = get_env()
        model, path, data = model_source(model)
        #: the model file as this session read it: a forked child rebuilds from the file, and
        #: must not build another model silently (_rebuild_after_fork)
        self._model_file = _file_identity(path) if path is not None else None
        # read once, here: an array of names has no truth value, a generator one reading
        entries = _provider_entries(providers)
        raw, taken, made, external = _create_session(api, env, model, options, entries,
                                                     option_kwargs)
        #: the external-data files ORT read (a shared session of the recipe must have read the
        #: same ones: _shared_session)
        self._external: ExternalData | None = external
        self._adopt(raw, api.ReleaseSession, (env, *taken), size=_held_bytes(path, data))
        # what pickling and a forked child rebuild from, as plain data: the recipe is made when
        # first asked. ``data`` is the very bytes object ORT was given, held until the session
        # is released (_drop_references): with session.use_ort_model_bytes_directly or
        # ..._for_initializers ORT reads an ORT-format model's bytes in place for the session's
        # life (tests/test_session.py::test_model_bytes_read_in_place_live_as_long_as_the_session)
        frozen: tuple[Any, ...] | None = None
        used_providers: list[str] = []
        self._provider_options: dict[str, dict[str, str]] = {}
        if made is not None:
            frozen, used_providers, self._provider_options = made
        self._recipe_fields = (path, data, frozen)
        if data is not None and (frozen is None or not frozen[_FROZEN_LIBRARIES]) and \
                os.environ.get("ORT_LOAD_CONFIG_FROM_MODEL") != "1":
            # (its description may be shared: _DESCRIPTIONS; initializers' arrays make the
            # key unhashable: none). Not with custom-op libraries (a library's file may
            # change), nor when ORT took settings from the model's own metadata: the key does
            # not hold them (the optimization level changes what ORT infers of the outputs)
            self._describable = True
        self._recipe: SessionRecipe | None = None
        if "CPUExecutionProvider" not in used_providers:
            used_providers.append("CPUExecutionProvider")  # ORT's fallback, always present
        self._providers = used_providers
        # (_run_exclusive, whether Run is exclusive, is worked out on first use: _RunRule)
        # the inputs, outputs, overridable initializers and the run engine are read from ORT
        # on first use (_IoOnFirstUse): a session made and dropped, or only pickled, never
        # pays for them
        if watcher.deferred is not None:
            # what a log handler raised on this thread while ORT made the session (Ctrl-C):
            # raised by this call, now that the session is adopted (released as it goes)
            watcher.raise_deferred()

    @staticmethod
    def _create(api: Api, env: Env, model: ModelSource, opts_ptr: Any,
                given: list[tuple[str, Any, int]] | None = None,
                external_folder: str | None = None) -> tuple[Any, ExternalData | None]:
        """The OrtSession for ``model`` and the external-data files it read; ``given``: the
        initializers the options hand ORT (name, array, element type), checked against the
        model's first; ``external_folder``: the folder the options name for external data. A
        model whose external data lies outside its folder is refused before ORT reads it
        (_check_external_data)."""
        external = None
        if isinstance(model, (str, os.PathLike)):
            path = os.fspath(model)
            cpath = fspath(path, "model path")
            try:
                mode = os.stat(cpath).st_mode
            except OSError:
                pass  # ORT names the problem (NoSuchFile, ...)
            else:
                if not stat.S_ISREG(mode):  # a FIFO would block ORT's read forever
                    raise InvalidArgument(f"model path {path!r} is not a regular file")
                external = _check_external_data(os.fsdecode(path), external_folder)
                if given:
                    _check_given_initializers(path, given)
            return call_out(api.CreateSession, "OrtSession*", env._ptr, cpath,
                            opts_ptr, context=f"loading model {path!r}"), external
        if hasattr(model, "read"):
            model = model.read()
            if not isinstance(model, (bytes, bytearray, memoryview)):  # a str is no path here
                raise TypeError(f"the model's file object must be binary (open it with 'rb'): "
                                f"its read() returned {type(model).__name__}")
        if isinstance(model, (bytes, bytearray, memoryview)):
            data = bytes(model) if isinstance(model, memoryview) else model
            if not data:
                raise InvalidArgument("the model is empty (0 bytes)")
            external = _check_external_data(data, external_folder)
            if given:
                _check_given_initializers(data, given)
            return call_out(api.CreateSessionFromArray, "OrtSession*", env._ptr,
                            ffi.from_buffer(data), len(data), opts_ptr,
                            context="loading model from bytes"), external
        raise TypeError(f"model must be a path, bytes or a binary file object, "
                        f"not {type(model).__name__}")


    def _read_io(self) -> tuple[list[NodeArg], list[NodeArg], list[NodeArg]]:
        """The model's inputs, outputs and overridable initializers, read from ORT (the caller
        keeps the session open: a guard entry, or the rebuild that holds its guard)."""
        api = self._api
        ptr = self._ptr
        alloc = default_allocator()._ptr
        return (read_node_args(api, ptr, api.SessionGetInputCount, api.SessionGetInputName,
                               api.SessionGetInputTypeInfo, alloc),
                read_node_args(api, ptr, api.SessionGetOutputCount, api.SessionGetOutputName,
                               api.SessionGetOutputTypeInfo, alloc),
                read_node_args(api, ptr, api.SessionGetOverridableInitializerCount,
                               api.SessionGetOverridableInitializerName,
                               api.SessionGetOverridableInitializerTypeInfo, alloc))

    def _publish_io(self, made: Description, replace: bool) -> None:
        """Make ``made`` (inputs, outputs, initializers, run engine) this session's. Without
        ``replace`` the first to publish wins (two threads that read at once then both use the
        one engine)."""
        d = self.__dict__
        if replace:
            d["_io"] = made
        else:
            made = d.setdefault("_io", made)  # one step under the GIL: of two, one wins
        d["_inputs"], d["_outputs"], d["_initializers"] = made[:3]
        d["_engine"] = made[3]  # last: its presence says the others are there

    def _load_io(self) -> None:
        """Read the inputs and outputs now and build a new run engine (a rebuilt session: the
        caller holds the session's guard; see _rebuild_after_fork)."""
        self._publish_io(_described(self._api, self._read_io()), replace=True)

    def _description_key(self) -> Any:
        """What this session's description is shared under (_DESCRIPTIONS), or None."""
        fields = self._recipe_fields  # (None once closed)
        if not self._describable or fields is None:
            return None
        _, data, frozen = fields
        return _description_key(data, frozen if frozen is not None else ())

    def _io_on_first_use(self) -> None:
        """(Reached through _IoOnFirstUse.) Take the shared description when there is one and
        the session is open and of this process (nothing is asked of ORT: no entry); else read
        the inputs and outputs inside a shared entry of the session's guard: a ClosedError
        when it is closed, the rebuild in a forked child (which reads them itself), and no
        release while ORT is asked."""
        guard = self._guard
        if guard is not None and guard.current():
            key = self._description_key()
            made = _DESCRIPTIONS.get(key) if key is not None else None
            if made is not None:
                self._publish_io(made, replace=False)
                return
        entries = Entries(sys._getframe(), "Session.inputs")
        try:
            entries.enter(self)
            if "_engine" not in self.__dict__:  # else the rebuild, or another thread, did
                key = self._description_key()
                made = _DESCRIPTIONS.get(key) if key is not None else None
                if made is None:
                    made = _described(self._api, self._read_io())
                    if key is not None:
                        if len(_DESCRIPTIONS) >= _DESCRIPTIONS_MAX:
                            _DESCRIPTIONS.clear()
                        made = _DESCRIPTIONS.setdefault(key, made)
                self._publish_io(made, replace=False)
        finally:
            entries.leave()

    def _drop_references(self) -> None:
        # the last Session released on the main thread gives back the signal wakeup fd its
        # runs took for Ctrl-C (only the main thread may set it)
        if _get_ident() == MAIN_THREAD and watcher.sigint_ready and \
                not live_count("Session"):
            watcher.uninstall()
        self._recipe = self._recipe_fields = None  # type: ignore[assignment]  # arrays may view
        # initializer values

    # -- recipes, pickling, fork (see ortc/recipe.py) ------------------------------------------
    @shared()
    def recipe(self) -> SessionRecipe:
        """What this session was built from (model path or bytes, every option, providers):
        immutable plain data that pickles; :meth:`from_recipe` builds an equal session."""
        return self._made_recipe()

    def _made_recipe(self) -> SessionRecipe:
        recipe = self._recipe
        if recipe is None:  # two threads may both make one: equal recipes, either is kept
            from .recipe import OptionsRecipe, RecipeError, SessionRecipe, _remember_bytes, \
                content_digest, file_digest

            path, data, options = self._recipe_fields
            if path is not None:
                # the recipe names the model this session read: a file replaced since is
                # refused here rather than named as this session's model
                if _file_identity(path) != self._model_file:
                    raise RecipeError(
                        f"the model file {path!r} changed after this session read it: a "
                        f"recipe (a pickle) of this session would name another model; make "
                        f"the session again, or make it from the model's bytes")
                digest = file_digest(path)
            else:
                digest = content_digest(data)
            recipe = self._recipe = SessionRecipe(
                path, data, OptionsRecipe(*options) if options is not None else OptionsRecipe(),
                model_digest=digest)
            _remember_bytes(recipe)
            if self._shareable():
                # a Session unpickled in this process (threaded workers, a local client)
                # uses this one rather than building the same model again
                _share((path, digest, recipe.options), self)
        return recipe

    @classmethod
    def from_recipe(cls, recipe: SessionRecipe, *, verify_bytes: bool = False) -> Session:
        """A new session built from ``recipe``, now. A path recipe whose file is missing raises
        NoSuchFile naming it, one whose file is not the recipe's model any more (its content
        digest differs) raises ortc.recipe.RecipeError, as does a recipe of a newer format.
        Options that write files warn (ortc.recipe.RecipePathWarning). ``verify_bytes``:
        check the model bytes' digest too (a hash of the whole model)."""
        from .recipe import check_recipe, verify_model, warn_path_options
        from .session_options import SessionOptions

        r = check_recipe(recipe)
        if r.model_path is not None or verify_bytes:
            verify_model(r)
        warn_path_options(r.options)
        opts = SessionOptions.from_recipe(r.options)
        try:
            made = cls(r.model_path if r.model_path is not None else r.model_bytes, opts)
        finally:
            opts.close()
        made._recipe = r  # (its digest is checked: no need to hash the model again)
        return made

    @classmethod
    def _unbuilt(cls, recipe: SessionRecipe) -> Session:
        """A Session over ``recipe`` that is built on its first use (an unpickled one): a
        process that only passes it on (a scheduler, a tokenizer) never builds it. Its guard
        belongs to no fork generation, so the first guarded call, whatever thread makes it,
        goes to :meth:`_rebuild_after_fork` (the same path a forked child's first use takes):
        the run path gains no check of its own."""
        self = cls.__new__(cls)
        self._api = _loader.api()
        self._model_file = None
        self._external = None  # (its core has them: _build_unpickled)
        self._recipe = recipe
        self._recipe_fields = (recipe.model_path, recipe.model_bytes, None)
        options = recipe.options
        self._providers = [name for name, _ in options.providers]
        if "CPUExecutionProvider" not in self._providers:
            self._providers.append("CPUExecutionProvider")
        self._provider_options = {name: dict(o) for name, o in options.providers}
        self._run_exclusive = run_is_exclusive(self._providers, self._provider_options)
        self._unpickled = True
        guard = self._guard = Guard(self.send, self.sync)
        guard.gen = -1  # no generation's: the first entry builds (Guard._after_fork)
        return self

    def _shareable(self) -> bool:
        """Whether this session's recipe may share one ORT session with the other unpickled
        sessions of the same recipe: only when runs may be concurrent (a provider that makes
        them exclusive needs the one guard of one Session) and nothing is profiled (each
        session's end_profiling ends its own profile)."""
        recipe = self._recipe
        return not self._run_exclusive and recipe is not None and \
            not dict(recipe.options.settings).get("enable_profiling")

    def __reduce__(self) -> tuple[Any, ...]:
        # a Session pickles as its recipe: the model bytes travel once, a path is not read
        self._check_open()  # not the guard: pickling an inherited session needs no rebuild
        return (_session_from_recipe, (self._made_recipe(),))

    def _rebuild_after_fork(self, guard: Guard) -> None:
        """First use in a forked child (called by ``guard``): build a new OrtSession from the
        recipe, once, whichever thread comes first. The parent's session is left alone: its
        pointer is dropped, and a release in a new fork generation is skipped (ORT's thread
        pools did not survive the fork)."""
        _build_once(_builds.setdefault(self, []), guard.renewed_in_this_process,
                    lambda: self._rebuild_now(guard))

    def _rebuild_now(self, guard: Guard) -> None:
        """(_rebuild_after_fork's build, run once.)"""
        if guard.renewed_in_this_process():
            return  # another thread of this child rebuilt it meanwhile
        if guard.closed:
            raise guard._forked(self)  # closed before its first use (ClosedError)
        if self._unpickled:
            self._build_unpickled(guard)
            return
        from .recipe import OptionsRecipe, SessionRecipe, check_recipe
        from .session_options import SessionOptions

        # the recipe as recorded, without its digest (no hash of the model per child):
        # the file's identity says whether it is still the file this session read
        path, data, options = self._recipe_fields
        r = check_recipe(self._recipe or SessionRecipe(
            path, data, OptionsRecipe(*options) if options is not None else OptionsRecipe()))
        if r.model_path is not None and self._model_file is not None and \
                _file_identity(r.model_path) != self._model_file:
            from .recipe import RecipeError

            raise RecipeError(
                f"the model file {r.model_path!r} changed after this session read it (pid "
                f"{os.getpid()} is a forked child, which rebuilds the session from the "
                f"file): keep the file as it was while children may start, or make the "
                f"session from the model's bytes (Session(open(path, 'rb').read()))")
        env = get_env()
        opts = SessionOptions.from_recipe(r.options)
        try:
            raw, taken, _, self._external = _create_session(
                self._api, env, r.model_path if r.model_path is not None else r.model_bytes,
                opts, [], {})
        finally:
            opts.close()
        self._adopt(raw, self._api.ReleaseSession, (env, *taken),
                    size=_held_bytes(r.model_path, r.model_bytes))
        self._guard = guard  # callers hold this guard: keep it, renewed last (that lets
        self._load_io()      # them in, after the new pointer and engine are in place)
        guard._renew()

    def _build_unpickled(self, guard: Guard) -> None:
        """(By _rebuild_now, once.) The first use of an unpickled session in this process: use
        the ORT session this process keeps for the recipe (built now if none is alive), or
        build one of its own when it cannot be shared (:meth:`_shareable`)."""
        recipe = self._recipe
        assert recipe is not None
        # a private one when it cannot be shared; either way this Session borrows its pointer
        # and keeps it alive (it is this Session's owner: the last user lets it go)
        shareable = self._shareable()
        core = _shared_session(recipe) if shareable else \
            SharedSession.from_recipe(recipe, verify_bytes=True)
        # a shared one is kept idle once this Session lets it go (_idle); a private one is not
        # found by any other Session: it goes with this one
        owner: Any = _Borrow(core) if shareable and type(core) is SharedSession else core
        self._adopt(ffi.cast("OrtSession*", core._ptr), None, (owner,))
        self._guard = guard  # callers hold this guard: keep it, renewed last
        self._inputs, self._outputs = core._inputs, core._outputs
        self._initializers = core._initializers
        # the core's run engine (a task's run after the first unpickled session of the process
        # then builds nothing)
        self._engine = core._engine
        guard._renew()

    def _ready(self) -> None:
        """Build a session not built in this process yet (unpickled, or made before fork), or
        raise ClosedError: for the attributes that read what the build finds (the guarded
        methods get there through their guard)."""
        guard = self._guard
        if guard is not None and not guard.renewed_in_this_process():
            guard._after_fork(self)
        self._check_open()

    def __dask_tokenize__(self) -> str:
        """Dask's name for this session: its recipe's token (model digest and options), made
        without building the session (see ortc.recipe.recipe_token)."""
        from .recipe import recipe_token

        self._check_open()
        return recipe_token(self._made_recipe())

    def __repr__(self) -> str:
        guard = self._guard
        if guard is not None and not guard.closed and guard.gen == -1:
            return "<ortc.Session not built yet (built on first use)>"
        return super().__repr__()

    # -- description ---------------------------------------------------------------------------
    @property
    def inputs(self) -> list[NodeArg]:
        """The model's inputs (name, type, dtype, shape with symbolic dims as str or None)."""
        self._ready()
        return list(self._inputs)

    @property
    def outputs(self) -> list[NodeArg]:
        """The model's outputs."""
        self._ready()
        return list(self._outputs)

    @property
    def overridable_initializers(self) -> list[NodeArg]:
        """Initializers that may be fed like inputs to override their stored value."""
        self._ready()
        return list(self._initializers)

    @property
    def providers(self) -> list[str]:
        """Execution providers requested for this session, CPU (the fallback) last."""
        self._check_open()
        return list(self._providers)

    @shared("SessionGetModelMetadata", "ModelMetadataGetProducerName",
            "ModelMetadataGetCustomMetadataMapKeys")
    def metadata(self) -> ModelMetadata:
        """The model's metadata (producer, domain, description, version, custom map)."""
        from .metadata import read_metadata

        md = call_out(self._api.SessionGetModelMetadata, "OrtModelMetadata*", self._ptr)
        try:
            return read_metadata(self._api, md, default_allocator()._ptr)
        finally:
            self._api.ReleaseModelMetadata(md)

    @property
    def model_metadata(self) -> ModelMetadata:
        return self.metadata()

    @shared("SessionGetProfilingStartTimeNs")
    def profiling_start_ns(self) -> int:
        out = ffi.new("uint64_t*")
        check(self._api.SessionGetProfilingStartTimeNs(self._ptr, out))
        return int(out[0])

    def thread_rules(self) -> dict[str, Any]:
        """Whether :meth:`run` may be called concurrently on this session, and why."""
        return session_run_rule(self._providers, self._provider_options)

    # -- running -------------------------------------------------------------------------------
    # Each entry point is its marker (the session's guard and the arguments it names, entered
    # by the wrapper) around one call of the run pipeline (ortc/_run.py).

    @shared("Run", args={"run_options": "shared"}, exclusive_when="_run_exclusive")
    def run(self, output_names: Sequence[str] | None, feeds: Mapping[str, Any],
            run_options: RunOptions | None = None, *, timeout: float | None = None
            ) -> list[RunOutput]:
        """Run the model: ``feeds`` maps input names to arrays (lists for sequences, dicts for
        maps, Values for anything); returns the outputs named (all when None), in that order:
        arrays for tensors, lists for sequences, dicts for maps, None for an empty optional
        (:data:`ortc.RunOutput`: narrow it with ``isinstance``, or read the model's outputs).
        C-contiguous arrays of the input's type are read in place; any other layout is copied
        once per run (``np.ascontiguousarray`` first, to pay that once for many runs).

        A tensor output of more than 64 KiB is a numpy view over the memory ORT allocated for
        it (no copy); a smaller one is copied into an array of its own (cheaper than a view).

        ``timeout`` (seconds) stops the run through RunOptions.terminate and raises
        :class:`ortc.RunTimeout`; with a shared ``run_options`` every run using them stops.
        On the main thread, Ctrl-C stops a run within milliseconds and raises
        KeyboardInterrupt. The session stays usable after either.
        """
        return self._engine.run(self._ptr, output_names, feeds, run_options, timeout, False)

    @shared("Run", args={"run_options": "shared"}, exclusive_when="_run_exclusive")
    def run_with_values(self, output_names: Sequence[str] | None, feeds: Mapping[str, Any],
                        run_options: RunOptions | None = None, *,
                        timeout: float | None = None) -> list[Value]:
        """Like :meth:`run`, but the outputs are ortc Values (no conversion). Never None: ORT
        gives every output of a run that succeeded a value, and an empty optional is a Value
        whose ``has_value()`` is False."""
        return self._engine.run(self._ptr, output_names, feeds, run_options, timeout, True)

    @shared("RunAsync", args={"run_options": "shared"}, exclusive_when="_run_exclusive")
    def run_async(self, output_names: Sequence[str] | None, feeds: Mapping[str, Any],
                  run_options: RunOptions | None = None, *, timeout: float | None = None
                  ) -> Future[list[RunOutput]]:
        """Start a run on ORT's intra-op thread pool and return a Future of its outputs
        (the same list :meth:`run` returns). Needs ``intra_op_num_threads`` >= 2.

        The completion runs on an ORT thread; the inputs, the run options and the session
        stay alive until it has run (closing the session meanwhile defers its release). ORT
        reads C-contiguous numpy inputs of the input's type in place while the run is in
        flight, as :meth:`run` does, without a copy: such an array written to before the
        Future is done may give the run the new values. Any other layout (a transposed or
        strided view) is copied once when the run starts, and later writes do not reach it.
        ``asyncio.wrap_future`` turns the Future into an awaitable. ``timeout`` (seconds)
        stops the run as in :meth:`run`; the Future then raises :class:`ortc.RunTimeout`.
        Ctrl-C interrupts a wait on the Future, not the run: the run is not on the main
        thread. ``Future.cancel()`` stops the run, and it alone (so does cancelling an
        asyncio task awaiting ``asyncio.wrap_future`` of it, e.g. at ``asyncio.wait_for``'s
        timeout): the run has options of its own, a stand-in for ``run_options`` when given
        (which other runs may share), and ``run_options.terminate()`` stops every run using
        them, this one included.

        Done-callbacks (``Future.add_done_callback``) run on that ORT thread too: one that
        waits for another ``run_async`` of this session can wait forever, since that run may
        need the very thread the callback holds (with ``intra_op_num_threads=2`` it does).
        Hand such work to an executor of your own from the callback.
        """
        return self._engine.start_async(self, output_names, feeds, run_options, timeout)

    # -- the bound path ------------------------------------------------------------------------
    @shared("CreateIoBinding")
    def io_binding(self) -> IoBinding:
        """A new :class:`IoBinding` for this session (one per thread)."""
        from .binding import IoBinding

        return IoBinding(self)

    @shared("RunWithBinding", args={"binding": "exclusive", "run_options": "shared"},
            exclusive_when="_run_exclusive")
    def run_with_binding(self, binding: IoBinding, run_options: RunOptions | None = None, *,
                         timeout: float | None = None) -> None:
        """Run with the inputs and outputs bound in ``binding`` (see :class:`IoBinding`).
        ``timeout`` and Ctrl-C stop it as they stop :meth:`run`."""
        if getattr(binding, "_session", self) is not self:
            raise InvalidArgument("run_with_binding: this IoBinding belongs to another session")
        if not hasattr(binding, "_enter_bound"):
            raise TypeError(f"run_with_binding needs an ortc.IoBinding (session.io_binding()), "
                            f"not {type(binding).__name__}")
        self._engine.run_bound(self._ptr, binding, run_options, timeout)

    @exclusive("SessionEndProfiling")
    def end_profiling(self) -> str:
        """Stop profiling and return the profile file's path."""
        alloc = default_allocator()._ptr
        out = call_out(self._api.SessionEndProfiling, "char*", self._ptr, alloc)
        try:
            return cast(bytes, ffi.string(out)).decode()
        finally:
            ignore(self._api.AllocatorFree(alloc, out))

    @shared("CreateAllocator", args={"memory_info": "shared"})
    def allocator(self, memory_info: MemoryInfo | None = None) -> Allocator:
        """An allocator of this session's (CPU arena by default); it keeps the session alive."""

        info = memory_info or cpu_memory_info()
        info._check_open()
        memory = info.name  # before the allocator exists: nothing to release if this fails
        raw = call_out(self._api.CreateAllocator, "OrtAllocator*", self._ptr, info._ptr)
        return Allocator._wrap(raw, self._api.ReleaseAllocator, (self,), memory)


class SharedSession(Session):
    """The ORT session under the unpickled Sessions of one recipe in a process (never handed
    out): each of them borrows its pointer and keeps it alive, so ``ortc.live_handles()``
    counts one ``SharedSession`` per model built here, beside one ``Session`` per unpickled
    Session in use. Built by :func:`_shared_session`; a private one under an unpickled Session
    whose recipe cannot be shared (:meth:`Session._shareable`)."""
