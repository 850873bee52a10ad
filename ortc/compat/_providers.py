"""onnxruntime's rules for the ``providers`` and ``provider_options`` arguments."""

from __future__ import annotations

import warnings
from collections.abc import Sequence as _SequenceABC
from typing import Any, Mapping, Sequence


def normalize_providers(providers: Any, provider_options: Any, available: Sequence[str]
                        ) -> tuple[list[str], list[dict[str, str]]]:
    """onnxruntime's rules for ``providers`` / ``provider_options``: names or (name, dict)
    pairs, or names plus a parallel list of dicts; a provider not in the build warns."""
    if providers is None:
        return [], []
    if provider_options is None and type(providers) is list and len(providers) == 1 and \
            providers[0] == "CPUExecutionProvider" and "CPUExecutionProvider" in available:
        return ["CPUExecutionProvider"], [{}]  # (what nearly every session is given)
    chosen: dict[str, dict[str, str]] = {}

    def add(name: str, options: Mapping[Any, Any]) -> None:
        if name not in available:
            warnings.warn(f"Specified provider '{name}' is not in available provider names."
                          f"Available providers: '{', '.join(available)}'")
        if name in chosen:
            warnings.warn(f"Duplicate provider '{name}' encountered, ignoring.")
            return
        chosen[name] = {str(k): str(v) for k, v in options.items()}

    if not isinstance(providers, _SequenceABC):
        raise ValueError("'providers' should be a sequence.")
    if provider_options is not None:
        if not isinstance(provider_options, _SequenceABC):
            raise ValueError("'provider_options' should be a sequence.")
        if len(providers) != len(provider_options):
            raise ValueError("'providers' and 'provider_options' should be the same length if "
                             "both are given.")
        if not all(isinstance(p, str) for p in providers):
            raise ValueError("Only string values for 'providers' are supported if "
                             "'provider_options' is given.")
        if not all(isinstance(o, dict) for o in provider_options):
            raise ValueError("'provider_options' values must be dicts.")
        for name, options in zip(providers, provider_options):
            add(name, options)
    else:
        for p in providers:
            if isinstance(p, str):
                add(p, {})
            elif isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) \
                    and isinstance(p[1], dict):
                add(p[0], p[1])
            else:
                raise ValueError("'providers' values must be either strings or (string, dict) "
                                 "tuples.")
    return list(chosen), list(chosen.values())


def check_and_normalize_provider_args(providers: Any, provider_options: Any,
                                      available_provider_names: Sequence[str]
                                      ) -> tuple[list[str], list[dict[str, str]]]:
    """onnxruntime's helper of that name (in its ``onnxruntime_inference_collection``):
    ``providers`` and ``provider_options`` checked and normalized, as sessions take them."""
    return normalize_providers(providers, provider_options, available_provider_names)
