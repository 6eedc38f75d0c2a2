"""Named instances of one kind (rules, state codecs, weight stores), looked up by name.

Each axis of the design (``DESIGN.md``: rules, codecs, placements) keeps its members in one
``Registry``, so a name is looked up, refused and listed the same way on every axis."""

from typing import Generic, Protocol, TypeVar


class _Named(Protocol):
    name: str


T = TypeVar("T", bound=_Named)


class Registry(Generic[T]):
    """Instances of ``kind`` under their lower-case ``name``. ``what`` is the user's word for
    one (the argument that takes it, e.g. ``state_dtype``): errors name it and what is available."""

    def __init__(self, kind: type[T], what: str) -> None:
        self.kind = kind
        self.what = what
        self._items: dict[str, T] = {}

    def add(self, item: T) -> T:
        name = item.name.lower()
        if name in self._items:
            raise ValueError(f"{self.what} {item.name!r} registered twice")
        self._items[name] = item
        return item

    def register(self, cls: type[T]) -> type[T]:
        """Class decorator: add one instance of ``cls``."""
        self.add(cls())
        return cls

    def get(self, name: "str | T") -> T:
        """The instance called ``name`` (case-insensitive), or ``name`` itself if it is one."""
        if isinstance(name, self.kind):
            return name
        if not isinstance(name, str):
            raise TypeError(f"{self.what} must be a name, one of {self.names()}, got {name!r}")
        if name.lower() not in self._items:
            raise ValueError(f"unknown {self.what} {name!r}; available: {self.names()}")
        return self._items[name.lower()]

    def names(self) -> list[str]:
        return sorted(self._items)
