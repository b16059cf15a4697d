"""The extractor registry: the `custom` entry types a person opted into search, and which strings
of their `data` become `custom.entry` fragments (docs/protocol.md, Initialization).

An extension's `custom` entries are its private state, invisible to search until someone names
their type here: `[{"customType": "todo-state", "fields": ["title", "items.*.text"], "label":
"Todos"}]`. A field is a dot path into `data`; `*` is every element of a list or value of an
object, a number an index into a list. Only strings are taken.

Parsing is forgiving (a bad entry is a warning and is left out, never an error) and bounded (so
is what one entry can yield). A value with nothing valid in it is no registry at all (None): the
process then keeps the one it had, or the index's, so a typo never drops what is indexed.
Everything here is pure but `load_file`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

MAX_EXTRACTORS = 256
MAX_FIELDS = 32
MAX_DEPTH = 16  # segments of one path
MAX_NAME = 200  # characters of a customType, a path
MAX_LABEL = 100
MAX_STRINGS = 1000  # strings one entry yields: the rest is left out


@dataclass(frozen=True, slots=True)
class Extractor:
    custom_type: str
    fields: tuple[str, ...]
    label: str

    def strings(self, data: Any) -> list[str]:
        """The non-blank strings at the fields' paths, field by field, in the data's order."""
        out: list[str] = []
        for path in self.fields:
            for value in _walk(data, path.split(".")):
                if isinstance(value, str) and value.strip():
                    out.append(value)
                    if len(out) >= MAX_STRINGS:
                        return out
        return out

    def as_json(self) -> dict[str, Any]:
        return {"customType": self.custom_type, "fields": list(self.fields), "label": self.label}


@dataclass(frozen=True, slots=True)
class Registry:
    """Extractors by customType (one each), in customType order: two equal registries compare
    and serialise equal whatever order they were written in."""

    extractors: tuple[Extractor, ...] = ()
    _by_type: dict[str, Extractor] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_type", {e.custom_type: e for e in self.extractors})

    def get(self, custom_type: str) -> Extractor | None:
        return self._by_type.get(custom_type)

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(e.custom_type for e in self.extractors)

    def to_json(self) -> str:
        return orjson.dumps([e.as_json() for e in self.extractors]).decode()

    def changed(self, other: Registry) -> set[str]:
        """The customTypes whose projection differs between the two: added, removed, changed."""
        mine, theirs = self._by_type, other._by_type
        return {t for t in mine.keys() | theirs.keys() if mine.get(t) != theirs.get(t)}


EMPTY = Registry()


def _walk(value: Any, path: list[str]) -> Iterator[Any]:
    if not path:
        yield value
        return
    key, rest = path[0], path[1:]
    if key == "*":
        children = value if isinstance(value, list) else \
            list(value.values()) if isinstance(value, dict) else []
        for child in children:
            yield from _walk(child, rest)
    elif isinstance(value, dict) and key in value:
        yield from _walk(value[key], rest)
    elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
        yield from _walk(value[int(key)], rest)


def _field_error(path: Any) -> str | None:
    if not isinstance(path, str) or not path:
        return "every field must be a non-empty string"
    if len(path) > MAX_NAME:
        return f"a field is longer than {MAX_NAME} characters"
    parts = path.split(".")
    if any(not p for p in parts):
        return f"field {path!r} has an empty segment"
    if len(parts) > MAX_DEPTH:
        return f"field {path!r} is deeper than {MAX_DEPTH}"
    return None


def _one(item: Any, where: str) -> tuple[Extractor | None, str | None]:
    if not isinstance(item, dict):
        return None, f"{where}: expected an object with customType, fields and label"
    custom_type = item.get("customType")
    if not isinstance(custom_type, str) or not custom_type.strip() or len(custom_type) > MAX_NAME:
        return None, f"{where}: customType must be a non-empty string (at most {MAX_NAME})"
    fields = item.get("fields")
    if not isinstance(fields, list) or not fields or len(fields) > MAX_FIELDS:
        return None, f"{where} ({custom_type}): fields must be a list of 1..{MAX_FIELDS} paths"
    for path in fields:
        error = _field_error(path)
        if error:
            return None, f"{where} ({custom_type}): {error}"
    label = item.get("label", custom_type)
    if not isinstance(label, str) or not label.split() or len(label) > MAX_LABEL:
        return None, f"{where} ({custom_type}): label must be a non-empty string (at most " \
                     f"{MAX_LABEL})"
    unknown = sorted(set(item) - {"customType", "fields", "label"})
    if unknown:
        return None, f"{where} ({custom_type}): unknown key {unknown[0]!r}"
    # A label is shown before every string it labels: one line, whitespace collapsed.
    return Extractor(custom_type, tuple(dict.fromkeys(fields)), " ".join(label.split())), None


def parse(value: Any, where: str = "extractors") -> tuple[Registry | None, list[str]]:
    """A registry from a list of entries; every bad entry is named in the warnings and left out
    (a second entry for one customType too). None, with a warning, for a value that is not a
    list or whose entries are all bad (an empty list is the empty registry)."""
    if not isinstance(value, list):
        return None, [f"{where}: expected a list of {{customType, fields, label}}; ignored"]
    warnings: list[str] = []
    found: dict[str, Extractor] = {}
    for i, item in enumerate(value):
        if len(found) >= MAX_EXTRACTORS:
            warnings.append(f"{where}: more than {MAX_EXTRACTORS} entries; the rest ignored")
            break
        ext, warning = _one(item, f"{where}[{i}]")
        if ext is not None and ext.custom_type in found:
            warning = f"{where}[{i}] ({ext.custom_type}): a second entry for this customType"
            ext = None
        if ext is None:
            warnings.append(f"{warning}; ignored")
            continue
        found[ext.custom_type] = ext
    if value and not found:
        return None, [*warnings, f"{where}: no valid entry; ignored as a whole"]
    return Registry(tuple(found[t] for t in sorted(found))), warnings


def from_json(text: str) -> Registry:
    """A registry as `Registry.to_json` wrote it (an index's record); anything else: empty."""
    try:
        return parse(orjson.loads(text))[0] or EMPTY
    except orjson.JSONDecodeError:
        return EMPTY


def load_file(path: Path) -> tuple[Registry | None, list[str]]:
    """The user file: `{"extractors": [...]}`. No file: the empty registry (nothing registered).
    A file that holds no usable registry: None and a warning."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return EMPTY, []
    except OSError as exc:
        return None, [f"{path}: unreadable ({exc.strerror or exc}); ignored"]
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return None, [f"{path}: not JSON ({exc}); ignored"]
    if not isinstance(obj, dict) or "extractors" not in obj:
        return None, [f"{path}: expected an object {{\"extractors\": [...]}}; ignored"]
    return parse(obj["extractors"], f"{path}: extractors")
