"""A model's metadata, copied at once into a plain frozen dataclass.

``OrtModelMetadata`` is a read-only snapshot in ORT (Send and Sync), an independent copy of the
session's (conformance check session.metadata-outlives-session). ortc copies it into Python
values and releases the C object immediately, so nothing here holds a handle. The module is
imported when metadata is first read, not by a session (making the dataclass costs 0.4 ms).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from ._ffi import ffi
from ._loader import Api
from ._status import check, ignore

__all__ = ["ModelMetadata", "read_metadata"]


@dataclass(frozen=True)
class ModelMetadata:
    """A model's metadata (a copy; it does not depend on the session afterwards)."""

    producer_name: str = ""
    graph_name: str = ""
    domain: str = ""
    description: str = ""
    graph_description: str = ""
    version: int = 0
    custom_metadata_map: dict[str, str] = field(default_factory=dict)


def read_metadata(api: Api, md: Any, allocator: Any) -> ModelMetadata:
    """Copy an ``OrtModelMetadata*`` (not released here); strings come from ``allocator``."""

    def take_string(fn: Any, *args: Any) -> str:
        out = ffi.new("char**")
        check(fn(*args, out))
        try:
            return cast(bytes, ffi.string(out[0])).decode("utf-8", "replace") \
                if out[0] != ffi.NULL else ""
        finally:
            if out[0] != ffi.NULL:
                check(api.AllocatorFree(allocator, out[0]))

    version = ffi.new("int64_t*")
    check(api.ModelMetadataGetVersion(md, version))
    custom: dict[str, str] = {}
    keys = ffi.new("char***")
    nkeys = ffi.new("int64_t*")
    check(api.ModelMetadataGetCustomMetadataMapKeys(md, allocator, keys, nkeys))
    if keys[0] != ffi.NULL:
        try:
            for i in range(nkeys[0]):
                key = cast(bytes, ffi.string(keys[0][i]))
                custom[key.decode("utf-8", "replace")] = take_string(
                    api.ModelMetadataLookupCustomMetadataMap, md, allocator, keys[0][i])
        finally:  # free every key even if one free fails (and free a failure's status)
            for i in range(nkeys[0]):
                ignore(api.AllocatorFree(allocator, keys[0][i]), "AllocatorFree")
            ignore(api.AllocatorFree(allocator, keys[0]), "AllocatorFree")
    graph_description = ""
    if api.has("ModelMetadataGetGraphDescription"):
        graph_description = take_string(api.ModelMetadataGetGraphDescription, md, allocator)
    return ModelMetadata(
        producer_name=take_string(api.ModelMetadataGetProducerName, md, allocator),
        graph_name=take_string(api.ModelMetadataGetGraphName, md, allocator),
        domain=take_string(api.ModelMetadataGetDomain, md, allocator),
        description=take_string(api.ModelMetadataGetDescription, md, allocator),
        graph_description=graph_description,
        version=int(version[0]),
        custom_metadata_map=custom,
    )
