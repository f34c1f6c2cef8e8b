"""What ``track-gen explore`` exports and reads back: :class:`Settings`.

A :class:`Settings` is everything that decides a batch besides the device: the course family
(``"track"`` or ``"gates"``), the base seed (env ``e`` is seeded ``seed + e``), the config
fields that were set (static and dynamic, by their flat config names, so
``TrackGenConfig(**settings.config)`` alone rebuilds the pipeline), the dynamic parameters no
config field backs (a plugin stage's, by ``params`` name) and the randomized fields
(``with_randomize``). Its JSON form (:meth:`Settings.to_json`) is the page's "JSON" export::

    {"format": "track_gen.explore/1", "family": "track", "seed": 0,
     "config": {"generator": "polar", "num_envs": 16, "half_width": 0.12},
     "params": {}, "randomize": {"polar.radial_jitter": [0.3, 0.8]}}

:func:`read_settings` reads such a file and :meth:`Settings.build` turns it into a generator.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .. import GateGenConfig, GateGenerator, TrackGenConfig, TrackGenerator
from ..core.checks import is_int, is_number
from ..engine.params import as_range
from ..io.paths import MAX_SETTINGS_BYTES, read_bytes
from ..pipeline import presets

__all__ = ["FAMILIES", "FORMAT", "Settings", "read_settings", "track_generator_from_file"]

#: The ``"format"`` tag of a settings JSON document.
FORMAT = "track_gen.explore/1"
#: Course families: ``"track"`` (TrackGenerator) and ``"gates"`` (GateGenerator).
FAMILIES = ("track", "gates")
_KEYS = ("format", "family", "seed", "config", "params", "randomize")


def _family(family: str):
    """``(config class, generator class, preset name)`` of a family."""
    if family == "gates":
        return GateGenConfig, GateGenerator, "gates"
    return TrackGenConfig, TrackGenerator, "track"


def config_defaults(family: str) -> dict[str, Any]:
    """``{field: default}`` of the family's config class (its own overrides included)."""
    cls = _family(family)[0]
    return {f.name: f.default for f in dataclasses.fields(cls)}


def config_tunables(family: str) -> dict:
    """``{field: Tunable}`` of the family's config class."""
    return {t.field: t for t in _family(family)[0].__tunables__}


def _check_name_map(where: str, value, what: str) -> dict:
    if not isinstance(value, Mapping):
        raise TypeError(f"{where} must be a JSON object of {what}, got {type(value).__name__}")
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise TypeError(f"{where} keys must be str names, got {bad[:3]!r}")
    return dict(value)


@dataclass(frozen=True)
class Settings:
    """The settings of one explored batch (frozen; see the module docs).

    Attributes:
        family: ``"track"`` or ``"gates"``.
        seed: base seed, int; env ``e`` is seeded ``seed + e``.
        config: config field -> value for every field set (the rest keep the class default);
            ``device`` is never part of it.
        params: dynamic parameter name -> float for parameters no config field backs.
        randomize: dynamic parameter name -> ``(lo, hi)`` drawn per env from (seed, epoch).
    """

    family: str = "track"
    seed: int = 0
    config: Mapping[str, Any] = field(default_factory=dict)
    params: Mapping[str, float] = field(default_factory=dict)
    randomize: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.family, str) or self.family not in FAMILIES:
            raise ValueError(f"family = {self.family!r}: must be one of {FAMILIES}")
        if isinstance(self.seed, bool) or not is_int(self.seed):
            raise TypeError(f"seed must be an int, got {type(self.seed).__name__} {self.seed!r}")
        config = _check_name_map("config", self.config, "config fields")
        if "device" in config:
            raise ValueError(
                "config['device']: the device is not part of the settings; pass it to "
                "build(device=...) (track-gen explore --device)"
            )
        params = _check_name_map("params", self.params, "parameter values")
        for name, v in params.items():
            if not is_number(v):
                raise TypeError(f"params[{name!r}] must be a number, got {type(v).__name__} {v!r}")
        rnd = _check_name_map("randomize", self.randomize, "(lo, hi) ranges")
        rnd = {name: as_range(name, lo_hi) for name, lo_hi in rnd.items()}
        object.__setattr__(self, "seed", int(self.seed))
        object.__setattr__(self, "config", MappingProxyType(config))
        object.__setattr__(self, "params", MappingProxyType(params))
        object.__setattr__(self, "randomize", MappingProxyType(rnd))

    # ------------------------------------------------------------------ building
    def make_config(self, device=None):
        """The family's config from :attr:`config` on ``device`` (checked by the library)."""
        cls = _family(self.family)[0]
        return cls(**dict(self.config), device=device)

    def make_spec_for(self, config):
        """The family's preset pipeline for a built ``config`` (no randomizers)."""
        if self.family == "gates":
            return presets.gates_from_config(config)
        return presets.track_from_config(config)

    def make_spec(self, device=None):
        """The :class:`~track_gen.pipeline.PipelineSpec` (preset + ``with_randomize``)."""
        spec = self.make_spec_for(self.make_config(device))
        if self.randomize:
            spec = spec.with_randomize(dict(self.randomize))
        return spec

    def build(self, device=None, registry=None):
        """A :class:`~track_gen.TrackGenerator` (``GateGenerator`` for gates) with these
        settings: built from :meth:`make_spec`, seeded ``seed + e``, :attr:`params` written.
        Nothing is generated yet. Raises the library's TypeError / ValueError / KeyError."""
        gen_cls = _family(self.family)[1]
        spec = self.make_spec(device)
        if not isinstance(spec.config, gen_cls._config_type):  # pragma: no cover - guard
            raise TypeError(f"settings family {self.family!r} does not match its config")
        gen = gen_cls(spec, seeds=self.seed, registry=registry)
        for name, value in self.params.items():
            gen.params[name] = value
        return gen

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict:
        """The JSON document (a dict of JSON values): ``generator`` and ``num_envs`` always,
        every other config field only where it differs from the class default."""
        defaults = config_defaults(self.family)
        config = {}
        for k, v in self.config.items():
            if k in ("generator", "num_envs") or defaults.get(k, object()) != v:
                config[k] = v
        for k in ("num_envs", "generator"):
            config.setdefault(k, defaults[k])
        order = [f for f in defaults if f in config]
        return {
            "format": FORMAT,
            "family": self.family,
            "seed": self.seed,
            "config": {k: config[k] for k in order},
            "params": dict(self.params),
            "randomize": {k: list(v) for k, v in self.randomize.items()},
        }

    @classmethod
    def from_json(cls, doc) -> Settings:
        """Settings from a JSON document (a dict) as :meth:`to_json` writes it.

        ``format`` is optional; every other key is optional too (defaults: family
        ``"track"``, seed 0, empty maps). Unknown keys raise ValueError."""
        if not isinstance(doc, Mapping):
            raise TypeError(f"settings must be a JSON object, got {type(doc).__name__}")
        unknown = [k for k in doc if k not in _KEYS]
        if unknown:
            raise ValueError(f"settings: unknown key(s) {sorted(map(str, unknown))}; keys: {_KEYS}")
        if "format" in doc and doc["format"] != FORMAT:
            raise ValueError(f"settings format {doc['format']!r}: this version reads {FORMAT!r}")
        rnd = doc.get("randomize", {})
        if isinstance(rnd, Mapping):
            for name, lo_hi in rnd.items():
                if not isinstance(lo_hi, (list, tuple)):
                    raise TypeError(
                        f"randomize[{name!r}] must be a [lo, hi] pair of numbers, got {lo_hi!r}"
                    )
        return cls(
            family=doc.get("family", "track"),
            seed=doc.get("seed", 0),
            config=doc.get("config", {}),
            params=doc.get("params", {}),
            randomize=rnd,
        )

    # ------------------------------------------------------------------ Python
    def python(self, params_by_field: Mapping[str, list[str]] | None = None) -> str:
        """A Python snippet that builds this batch: ``presets.track(...)`` (``presets.gates``)
        with the static fields, ``with_randomize`` and ``gen.params[...]`` writes for the
        dynamic values.

        Args:
            params_by_field: config field -> the ``params`` names that read it in the built
                pipeline (from a live generator); without it, dynamic config fields are passed
                to the preset like static ones.
        """
        family = self.family
        cfg_cls, gen_cls, preset = _family(family)
        tun = config_tunables(family)
        doc = self.to_json()["config"]
        static, writes = {}, {}
        for k, v in doc.items():
            t = tun.get(k)
            names = (params_by_field or {}).get(k)
            if t is not None and t.dynamic and names:
                for n in names:
                    writes[n] = v
            else:
                static[k] = v
        writes.update(self.params)
        args = ", ".join(f"{k}={_lit(v)}" for k, v in static.items())
        lines = [
            f"from track_gen import {gen_cls.__name__}",
            "from track_gen.pipeline import presets",
            "",
            f"spec = presets.{preset}({args})",
        ]
        if len(lines[-1]) > 100:  # one field a line, as ruff formats a long call
            rows = "".join(f"    {k}={_lit(v)},\n" for k, v in static.items())
            lines[-1] = f"spec = presets.{preset}(\n{rows})"
        if self.randomize:
            rnd = ", ".join(
                f"{_lit(n)}: ({lo!r}, {hi!r})" for n, (lo, hi) in self.randomize.items()
            )
            lines.append(f"spec = spec.with_randomize({{{rnd}}})")
        lines.append(f"gen = {gen_cls.__name__}(spec, seeds={self.seed})")
        for n, v in writes.items():
            if n in self.randomize:
                continue  # drawn per env at every regeneration
            lines.append(f"gen.params[{_lit(n)}] = {v!r}")
        lines.append("result = gen.generate()")
        return "\n".join(lines) + "\n"


def _lit(v) -> str:
    """A Python literal of a JSON value, strings in double quotes (ruff's style)."""
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    return repr(v)


def read_settings(path) -> Settings:
    """Read a settings JSON file (the page's "JSON" export).

    Raises:
        TypeError: ``path`` is not a str / ``os.PathLike``; a value of the wrong kind.
        FileNotFoundError: no file at ``path``; IsADirectoryError: ``path`` is a folder;
            another OSError: the file cannot be read.
        ValueError: not a regular file (a device, a FIFO, a socket: refused without reading
            it), a file larger than :data:`~track_gen.io.paths.MAX_SETTINGS_BYTES` (1 MiB,
            refused before reading it), not UTF-8 JSON, or settings the library refuses
            (naming the key and value).
    """
    _, raw = read_bytes(
        "path", path, "read_settings", "settings JSON file", max_bytes=MAX_SETTINGS_BYTES
    )
    where = os.fspath(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{where}: not a UTF-8 text file ({exc.reason} at byte {exc.start})"
        ) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: not a JSON document: {exc}") from exc
    except RecursionError as exc:
        raise ValueError(f"{where}: JSON nested too deeply to be settings") from exc
    return Settings.from_json(doc)


def track_generator_from_file(path, device=None):
    """``(TrackGenerator, seed)`` from a settings JSON file of the track family: what
    ``track-gen preview --config FILE`` draws. Nothing is generated yet.

    Raises:
        OSError, TypeError, ValueError: as :func:`read_settings`.
        ValueError: gate settings (preview draws tracks), or a value the library
            refuses (its own message).
        TypeError / KeyError: a value of the wrong kind, an unknown parameter name.
    """
    settings = read_settings(path)
    if settings.family != "track":
        raise ValueError(
            f"these settings are for {settings.family!r} courses; preview draws tracks (open "
            "them with track-gen explore --config instead)"
        )
    return settings.build(device=device), settings.seed
