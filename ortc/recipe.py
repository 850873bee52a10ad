"""Session recipes: what a session was built from, as plain picklable data.

>>> r = sess.recipe()                                                   # doctest: +SKIP
>>> same = ortc.Session.from_recipe(r)                                  # doctest: +SKIP
>>> pickle.loads(pickle.dumps(sess))        # a Session pickles as its recipe  # doctest: +SKIP

A :class:`SessionRecipe` holds the model (an absolute path, or the model's bytes, held by
reference), the model's content digest (``sha256:<hex>`` of the file or the bytes: a session
built from a path recipe whose file has been replaced since is refused with
:class:`RecipeError`, not silently built from another model), and an
:class:`OptionsRecipe`: every SessionOptions setting, config entry, free-dimension override,
initializer (as a read-only array over the memory the options gave ORT), custom-op library
path and execution provider with its options. Both are frozen; recipes are immutable. Only
:func:`apply_options` touches ORT (through SessionOptions' own methods); building a session
from a recipe is :meth:`ortc.Session.from_recipe`.

Unpickling a recipe calls only :func:`_recipe_from_state` / :func:`_options_from_state`, which
check every field's type (str, int, bool, bytes, numpy arrays of plain dtypes) before anything
is built, so a pickle cannot smuggle a callable into a session. A recipe written by a newer
ortc (a larger :data:`RECIPE_FORMAT`) is refused with :class:`RecipeError`.

With pickle protocol 5 the model's bytes go out of band (a :class:`pickle.PickleBuffer`): an
engine that collects the buffers (Dask, Ray's object store) ships or stores them without
copying them into the pickle stream, and a process that already holds a recipe of the same
content digest keeps its own bytes rather than another copy (:func:`_recipe_from_state`).

Options that name paths (custom-op libraries, ``optimized_model_filepath``,
``profile_file_prefix`` with ``enable_profiling``) are replayed as they are, on every machine
and in every process that builds the recipe: :func:`path_options` lists them, and building a
recipe whose options write files warns (:class:`RecipePathWarning`; see docs/CLUSTERS.md); a
custom-op library missing where the recipe is built raises NoSuchFile naming it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import Error, NoSuchFile

__all__ = ["SessionRecipe", "OptionsRecipe", "RecipeError", "RecipePathWarning",
           "RECIPE_FORMAT", "check_recipe", "apply_options", "frozen_array", "content_digest",
           "file_digest", "verify_model", "recipe_token", "path_options"]

#: the recipe format this ortc writes and the newest it reads (2: the model's content digest)
RECIPE_FORMAT = 2


class RecipeError(Error, ValueError):
    """A recipe (or a pickled session or options) that this ortc cannot build."""


class RecipePathWarning(UserWarning):
    """A recipe is built whose options write files (``optimized_model_filepath``, a profile):
    every process that builds it writes to the same path (on a shared file system, over each
    other's files). Silence it with ``warnings.filterwarnings("ignore",
    category=ortc.recipe.RecipePathWarning)`` once that is what you want."""


@dataclass(frozen=True, eq=False)
class OptionsRecipe:
    """Every SessionOptions setting, as plain data (see :meth:`ortc.SessionOptions.recipe`).

    Equal when every field is, initializers compared by name, element type, dtype, shape and
    contents; hashable (a per-worker cache may key sessions by their recipe).
    """

    #: attribute-style settings in the order first set: (name, int | str | bool)
    settings: tuple[tuple[str, Any], ...] = ()
    #: session config entries (key, value), last value per key
    config_entries: tuple[tuple[str, str], ...] = ()
    #: free-dimension overrides: ("name" | "denotation", symbol, size)
    free_dimensions: tuple[tuple[str, str, int], ...] = ()
    #: AddInitializer values: (name, read-only array, ONNX element type)
    initializers: tuple[tuple[str, np.ndarray[Any, Any], int], ...] = ()
    #: AddExternalInitializers values, one tuple per call, same form as ``initializers``
    external_initializers: tuple[tuple[tuple[str, np.ndarray[Any, Any], int], ...], ...] = ()
    custom_op_libraries: tuple[str, ...] = ()
    per_session_threads: bool = True
    #: execution providers in priority order: (canonical name, ((option, value), ...))
    providers: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_options_from_state, (RECIPE_FORMAT, _options_state(self)))

    def _plain_fields(self) -> tuple[Any, ...]:
        return (self.settings, self.config_entries, self.free_dimensions,
                self.custom_op_libraries, self.per_session_threads, self.providers)

    def _arrays(self) -> tuple[tuple[tuple[str, np.ndarray[Any, Any], int], ...], ...]:
        return (self.initializers, *self.external_initializers)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OptionsRecipe):
            return NotImplemented
        if self._plain_fields() != other._plain_fields():
            return False
        mine, theirs = self._arrays(), other._arrays()
        return len(mine) == len(theirs) and all(
            len(a) == len(b) and all(
                na == nb and ea == eb and xa.dtype == xb.dtype and xa.shape == xb.shape
                and (xa.tolist() == xb.tolist() if xa.dtype == object
                     else xa.tobytes() == xb.tobytes())
                for (na, xa, ea), (nb, xb, eb) in zip(a, b))
            for a, b in zip(mine, theirs))

    def __hash__(self) -> int:
        # the arrays by name, type and shape only: equal recipes still hash equal, cheaply
        return hash((self._plain_fields(), tuple(
            tuple((n, e, x.dtype.str, x.shape) for n, x, e in batch)
            for batch in self._arrays())))


@dataclass(frozen=True)
class SessionRecipe:
    """What a session was built from; ``ortc.Session.from_recipe(r)`` builds an equal one.

    Exactly one of ``model_path`` (absolute; external-data files resolve next to it) and
    ``model_bytes`` is set. ``model_digest`` is ``"sha256:<hex>"`` of the model file or bytes
    (None in a format-1 recipe): a path recipe whose file no longer has it is refused
    (:func:`verify_model`). External-data files are not part of the digest (a session kept
    for a recipe serves it only while they are the files it read: docs/CLUSTERS.md).
    ``format`` is the recipe format (:data:`RECIPE_FORMAT`).
    """

    model_path: str | None
    model_bytes: bytes | None
    options: OptionsRecipe = field(default_factory=OptionsRecipe)
    format: int = RECIPE_FORMAT
    model_digest: str | None = None

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        data: Any = self.model_bytes
        if data is not None and isinstance(protocol, int) and protocol >= 5:
            from pickle import PickleBuffer

            # out of band where the pickler collects buffers (Dask, Ray): not copied into the
            # stream; in band (no buffer_callback) it pickles as the same bytes
            data = PickleBuffer(data)
        return (_recipe_from_state, (self.format, self.model_path, data,
                                     _options_state(self.options), self.model_digest))

    def __reduce__(self) -> tuple[Any, ...]:
        return self.__reduce_ex__(2)

    def __dask_tokenize__(self) -> str:
        return recipe_token(self)

    def __repr__(self) -> str:
        model = (repr(self.model_path) if self.model_path is not None
                 else f"<{len(self.model_bytes or b'')} bytes>")
        digest = f", digest={self.model_digest[:19]}..." if self.model_digest else ""
        return (f"SessionRecipe(model={model}{digest}, format={self.format}, "
                f"options={self.options!r})")


# -- the model's content ---------------------------------------------------------------------

def content_digest(data: Any) -> str:
    """``"sha256:<hex>"`` of a bytes-like model."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def file_digest(path: str) -> str:
    """``"sha256:<hex>"`` of the file at ``path`` (read through a map: no copy in memory)."""
    import mmap

    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return content_digest(b"")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            with memoryview(m) as view:
                return content_digest(view)


def verify_model(recipe: SessionRecipe) -> str:
    """The recipe's model digest, checked against the model where it is built: a path
    recipe's file must still have the digest the recipe records (RecipeError if it was
    replaced), bytes must have theirs (RecipeError: damaged). A format-1 recipe (no digest)
    gets one computed here."""
    want = recipe.model_digest
    if recipe.model_path is not None:
        have = file_digest(recipe.model_path)
        if want is not None and have != want:
            raise RecipeError(
                f"the model file {recipe.model_path!r} is not the model this recipe was made "
                f"from (pid {os.getpid()} read {have[:19]}..., the recipe names "
                f"{want[:19]}...): it was replaced after the session was made; put the "
                f"original back, or make the session again from the new file (or from the "
                f"model's bytes: Session(open(path, 'rb').read()))")
        return have
    have = content_digest(recipe.model_bytes or b"")
    if want is not None and have != want:
        raise RecipeError(f"the recipe's model bytes do not have the digest it records "
                          f"({have[:19]}... against {want[:19]}...): damaged on the way")
    return have


def recipe_token(recipe: SessionRecipe) -> str:
    """A deterministic name of what ``recipe`` builds (model digest, path, every option,
    initializers by content): equal recipes give equal tokens. Dask's tokenizer uses it, so a
    session is named without being built. Computes the digest of a recipe that has none."""
    h = hashlib.sha256()
    digest = recipe.model_digest
    if digest is None:
        digest = (file_digest(recipe.model_path) if recipe.model_path is not None
                  else content_digest(recipe.model_bytes or b""))
    o = recipe.options
    h.update(repr((recipe.model_path, digest, o._plain_fields())).encode())
    for batch in o._arrays():
        for name, arr, et in batch:
            h.update(repr((name, et, arr.dtype.str, arr.shape)).encode())
            h.update(repr(arr.tolist()).encode() if arr.dtype == object
                     else memoryview(np.ascontiguousarray(arr)).cast("B"))
    return "ortc-session-" + h.hexdigest()


def path_options(options: OptionsRecipe) -> dict[str, tuple[str, ...]]:
    """The options of ``options`` that name files, by what they do: ``"reads"`` (custom-op
    libraries, loaded in every process that builds the recipe) and ``"writes"`` (the
    optimized model's path; the profile's prefix when profiling is on), each written by every
    such process."""
    settings = dict(options.settings)
    writes = []
    if settings.get("optimized_model_filepath"):
        writes.append(str(settings["optimized_model_filepath"]))
    if settings.get("enable_profiling"):
        writes.append(str(settings.get("profile_file_prefix", "onnxruntime_profile_")) + "*")
    return {"reads": tuple(options.custom_op_libraries), "writes": tuple(writes)}


def warn_path_options(options: OptionsRecipe) -> None:
    """Warn (RecipePathWarning) when building ``options`` writes files; refuse a custom-op
    library that is not there (NoSuchFile naming it)."""
    paths = path_options(options)
    for lib in paths["reads"]:
        if not os.path.isfile(lib):
            raise NoSuchFile(f"the recipe's custom-op library {lib!r} does not exist here "
                             f"(pid {os.getpid()}): a recipe names libraries by path, so "
                             f"every machine that builds it needs the file there")
    if paths["writes"]:
        import warnings

        warnings.warn(
            f"building a session from a recipe whose options write files: "
            f"{', '.join(map(repr, paths['writes']))}; every process that builds it (each "
            f"worker, each forked child) writes there, over each other's files on a shared "
            f"file system", RecipePathWarning, stacklevel=3)


def frozen_array(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """A read-only view of ``array`` (no copy: ORT reads the same memory for an initializer)."""
    view = array.view()
    view.flags.writeable = False
    return view


def apply_options(recipe: OptionsRecipe, opts: Any) -> Any:
    """Replay ``recipe`` onto a new SessionOptions ``opts`` through its public methods (each
    checks its argument as when the user called it); returns ``opts``."""
    from .value import Value  # the one ORT-facing import, for initializers of any element type

    for name, value in recipe.settings:
        setattr(opts, name, value)
    for key, value in recipe.config_entries:
        opts.add_session_config_entry(key, value)
    for kind, name, size in recipe.free_dimensions:
        if kind == "name":
            opts.add_free_dimension_override_by_name(name, size)
        else:
            opts.add_free_dimension_override(name, size)
    for name, arr, et in recipe.initializers:
        opts.add_initializer(name, Value.from_numpy(arr, et))
    for batch in recipe.external_initializers:
        opts.add_external_initializers({name: Value.from_numpy(arr, et)
                                        for name, arr, et in batch})
    for path in recipe.custom_op_libraries:
        opts.register_custom_ops_library(path)
    if not recipe.per_session_threads:
        opts.disable_per_session_threads()
    for name, options in recipe.providers:
        opts.append_execution_provider(name, dict(options))
    return opts


def check_recipe(recipe: Any) -> SessionRecipe:
    """``recipe`` if it can be built here: the type, the format, the model file."""
    if not isinstance(recipe, SessionRecipe):
        raise TypeError(f"expected an ortc.SessionRecipe (session.recipe()), "
                        f"not {type(recipe).__name__}")
    _check_format(recipe.format)
    if recipe.model_path is not None and not os.path.isfile(recipe.model_path):
        raise NoSuchFile(f"the recipe's model file {recipe.model_path!r} does not exist here "
                         f"(pid {os.getpid()}); a path recipe needs the file on every machine "
                         f"that builds it (recipe the bytes instead: Session(open(p, 'rb')))")
    return recipe


def _check_format(fmt: Any) -> None:
    if type(fmt) is not int or fmt < 1:
        raise RecipeError(f"recipe format {fmt!r} is not a format number")
    if fmt > RECIPE_FORMAT:
        raise RecipeError(f"this recipe has format {fmt}, written by a newer ortc; this ortc "
                          f"reads formats up to {RECIPE_FORMAT}: upgrade ortc where it is built")


# -- pickling: plain state out, checked state in ----------------------------------------------

def _options_state(o: OptionsRecipe) -> tuple[Any, ...]:
    return (o.settings, o.config_entries, o.free_dimensions, o.initializers,
            o.external_initializers, o.custom_op_libraries, o.per_session_threads, o.providers)


def _expect(cond: bool, what: str) -> None:
    if not cond:
        raise RecipeError(f"malformed recipe: {what}")


def _tuple_of(x: Any, n: int | None, what: str) -> tuple[Any, ...]:
    _expect(type(x) is tuple and (n is None or len(x) == n), f"{what} is not a tuple"
            + (f" of {n}" if n is not None else ""))
    return x  # type: ignore[no-any-return]


def _checked_arrays(entries: Any, what: str) -> tuple[tuple[str, np.ndarray[Any, Any], int], ...]:
    out = []
    for e in _tuple_of(entries, None, what):
        name, arr, et = _tuple_of(e, 3, what)
        _expect(type(name) is str and type(et) is int, f"{what}: bad name or element type")
        # object arrays may hold anything; only string tensors are object arrays
        _expect(type(arr) is np.ndarray and (arr.dtype != object or all(
            type(s) in (str, bytes) for s in arr.reshape(-1).tolist())),
            f"{what} {name!r} is not a numeric or string array")
        out.append((name, frozen_array(arr), et))
    return tuple(out)


def _options_from_state(fmt: Any, state: Any) -> OptionsRecipe:
    """Rebuild an OptionsRecipe from pickled state, checking every field's type."""
    _check_format(fmt)
    (settings, config, free, inits, external, libs, per_thread,
     providers) = _tuple_of(state, 8, "options")
    for k, v in _tuple_of(settings, None, "settings"):
        _expect(type(k) is str and type(v) in (int, str, bool, float), f"setting {k!r}")
    for k, v in _tuple_of(config, None, "config entries"):
        _expect(type(k) is str and type(v) is str, f"config entry {k!r}")
    for kind, name, size in _tuple_of(free, None, "free dimensions"):
        _expect(kind in ("name", "denotation") and type(name) is str and type(size) is int,
                f"free dimension {name!r}")
    for p in _tuple_of(libs, None, "custom op libraries"):
        _expect(type(p) is str, "custom op library path")
    _expect(type(per_thread) is bool, "per_session_threads")
    for p in _tuple_of(providers, None, "providers"):
        name, opts = _tuple_of(p, 2, "provider")
        _expect(type(name) is str, "provider name")
        for k, v in _tuple_of(opts, None, f"{name} options"):
            _expect(type(k) is str and type(v) is str, f"{name} option {k!r}")
    return OptionsRecipe(settings, config, free, _checked_arrays(inits, "initializer"),
                         tuple(_checked_arrays(b, "external initializer")
                               for b in _tuple_of(external, None, "external initializers")),
                         libs, per_thread, providers)


#: digest -> a live recipe holding those model bytes: an unpickled recipe whose bytes this
#: process already holds keeps those (the received copy is let go). Weak: dropped with the
#: last recipe; made on first use (weakref is not imported by ``import ortc``).
_bytes_by_digest: Any = None


def _known_bytes(digest: str) -> bytes | None:
    held = _bytes_by_digest
    recipe = held.get(digest) if held is not None else None
    return recipe.model_bytes if recipe is not None else None


def _remember_bytes(recipe: SessionRecipe) -> None:
    global _bytes_by_digest
    if recipe.model_bytes is None or recipe.model_digest is None:
        return
    if _bytes_by_digest is None:
        import weakref

        _bytes_by_digest = weakref.WeakValueDictionary()
    _bytes_by_digest.setdefault(recipe.model_digest, recipe)


def _recipe_from_state(fmt: Any, path: Any, data: Any, options: Any,
                       digest: Any = None) -> SessionRecipe:
    """Rebuild a SessionRecipe from pickled state, checking every field's type. The model's
    bytes may arrive out of band (protocol 5: any buffer): they are kept as bytes, those of a
    live recipe with the same digest when this process has one (no second copy), else
    copied once."""
    _check_format(fmt)
    _expect(digest is None or (type(digest) is str and digest.startswith("sha256:")),
            "the model digest must be a 'sha256:' string")
    if path is None and data is not None:
        known = _known_bytes(digest) if digest is not None else None
        if known is not None:
            data = known  # this process holds the same model: the received copy goes
        elif type(data) is not bytes:
            try:
                view = memoryview(data)
            except TypeError:
                view = None
            _expect(view is not None, "the model must be a path (str) or bytes")
            data = view.tobytes()  # type: ignore[union-attr]
    _expect((type(path) is str and data is None) or (path is None and type(data) is bytes),
            "the model must be a path (str) or bytes")
    recipe = SessionRecipe(path, data, _options_from_state(fmt, options), fmt, digest)
    _remember_bytes(recipe)
    return recipe
