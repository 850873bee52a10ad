"""Immutable plain data for the records a first session makes, without ``dataclasses``.

A frozen dataclass compiles its generated methods with ``exec`` when the class is made: 0.4 to
0.8 ms each, plus 0.55 ms to import ``dataclasses``. The three a first session needs
(:class:`~ortc.LibraryInfo`, :class:`~ortc.TypeInfo`, :class:`~ortc.NodeArg`) cost 2.4 ms of a
10 ms ``import ortc`` (``python -X importtime``; docs/PERFORMANCE.md, cold start). A
:class:`Record` behaves as a frozen dataclass does where users can tell: it compares, hashes,
prints, pickles and copies by its fields, matches positional class patterns, loads pickles made
while it was a dataclass, and refuses assignment (``dataclasses.replace`` and ``asdict`` do not
apply). Its fields are its ``__slots__``, in the order its ``__init__`` takes them; records made
later than a first session (recipes, metadata, version) stay frozen dataclasses.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar


class Record:
    """Base of ortc's immutable records; a subclass lists its fields in ``__slots__``."""

    __slots__: tuple[str, ...] = ()
    #: the fields' slot setters, in ``__slots__`` order (a slot's own setter skips the
    #: attribute lookup that ``object.__setattr__`` makes by name)
    _setters: ClassVar[tuple[Callable[[Any, Any], None], ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # positional class patterns (``case NodeArg(name, type)``), as a dataclass has
        setattr(cls, "__match_args__", cls.__slots__)
        setattr(cls, "_setters", tuple(getattr(cls, name).__set__ for name in cls.__slots__))

    def _init(self, *values: Any) -> None:
        # the one way fields are set: __setattr__ below refuses every assignment
        for set_field, value in zip(self._setters, values):
            set_field(self, value)

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot assign to {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({inner})"

    def __reduce__(self) -> tuple[Any, ...]:
        # pickle and copy rebuild through __init__ (slots would be restored by assignment)
        return type(self), self._fields()

    def __setstate__(self, state: Any) -> None:
        # A pickle made while the class was a frozen dataclass: the fields as its instance
        # dict (pickles made since rebuild through __reduce__ and never come here).
        fields = state[0] if isinstance(state, tuple) else state
        missing = [n for n in self.__slots__ if not isinstance(fields, dict) or n not in fields]
        if missing:
            raise TypeError(f"cannot unpickle {type(self).__name__}: no field "
                            f"{', '.join(map(repr, missing))} in its pickled state")
        for name in self.__slots__:
            object.__setattr__(self, name, fields[name])
