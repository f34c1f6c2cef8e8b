"""Whole batches to files and back: :func:`write_npz`, :func:`write_json`,
:func:`read_batch`, :func:`rebuild`.

A batch file holds every array of a :class:`~track_gen.Track` or
:class:`~track_gen.GateSequence` (NumPy, the flat NaN-padded layout), ``E`` and ``N_max``,
and, when the generator is given, what rebuilds it bit for bit: the config, the stages, the
randomized ranges, the per-env seeds, the epochs each env was built with
(``result.generation``), the dynamic parameter values and the generator's input arrays.

:func:`rebuild` builds a fresh generator from that record, writes the seeds, epochs, params
and inputs back and regenerates every built env at its saved epoch (``advance=False``); on the
device the batch was made on, its ``result`` is then byte-identical to the saved arrays (and
:func:`rebuild` checks it).
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import warp as wp

from ..config import GateGenConfig, TrackGenConfig
from ..core.checks import (
    INT32_MAX,
    check_bool,
    check_int,
    check_seed_values,
    host_values,
    is_int,
)
from ..engine.registry import Registry
from ..engine.spec import PipelineSpec, StageSpec
from ..generators import GateGenerator, TrackGenerator
from ..results import GateSequence, Track
from ..seeds import NUM_ENVS
from .paths import (
    MAX_BATCH_JSON_BYTES,
    MAX_BATCH_NPZ_BYTES,
    atomic_write,
    atomic_write_text,
    check_out_path,
    read_bytes,
)

__all__ = [
    "BATCH_FORMAT",
    "BATCH_VERSION",
    "BatchFile",
    "read_batch",
    "rebuild",
    "write_json",
    "write_npz",
]

#: ``format`` entry of every batch file.
BATCH_FORMAT = "track_gen.batch"
#: Layout version of batch files this module writes and reads.
BATCH_VERSION = 1
#: Key of a stage option saved as an array entry: ``{"__array__": "options.<stage>.<key>"}``.
_ARRAY_REF = "__array__"


@dataclass
class BatchFile:
    """What :func:`read_batch` returns.

    Attributes:
        path: the file read.
        kind: ``"track"`` (a :class:`~track_gen.Track`) or ``"gates"`` (a
            :class:`~track_gen.GateSequence`).
        num_envs: E.
        n_max: the per-env row stride (``N_max``, or ``max_gates`` for gates).
        arrays: result field name -> NumPy array in the flat layout (vec3f as float32
            ``[E*N_max, 3]``, quatf ``[E*N_max, 4]``, per-env fields ``[E]``), NaN padding kept.
        generator: the generator record (config, stages, randomize, device, ...) or None when
            the file was written without ``generator=``.
        seeds: int32 ``[E]`` seeds, or None.
        epochs: int32 ``[E]``: the epoch each env was built with (``result.generation``;
            -1: never built), or None.
        params: dynamic parameter name -> float32 ``[E]`` values (empty without generator).
        inputs: generator input name -> array (empty without generator).
        options: ``"options.<stage>.<key>"`` -> array: stage options saved as arrays (the
            ``real_track`` sampler's circuit table).
        meta: the rest of the header (format, version, library versions).
    """

    path: str
    kind: str
    num_envs: int
    n_max: int
    arrays: dict[str, np.ndarray]
    generator: dict | None = None
    seeds: np.ndarray | None = None
    epochs: np.ndarray | None = None
    params: dict[str, np.ndarray] = field(default_factory=dict)
    inputs: dict[str, np.ndarray] = field(default_factory=dict)
    options: dict[str, np.ndarray] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)


# ----------------------------------------------------------------------------- collecting
def _result_kind(result, who: str) -> str:
    if isinstance(result, Track):
        return "track"
    if isinstance(result, GateSequence):
        return "gates"
    raise TypeError(
        f"{who}: expected a track_gen.Track or GateSequence, got {type(result).__name__}"
    )


def _n_max(result) -> int:
    return result.N_max if isinstance(result, Track) else result.max_gates


def _jsonable(value) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _generator_record(result, generator, who: str) -> tuple[dict, dict[str, np.ndarray]]:
    """(header record, arrays) of ``generator`` (checked against ``result``): array stage
    options become ``options.<stage>.<key>`` entries; any other option that is not a JSON value
    makes the record not rebuildable (``why_not`` says which)."""
    kind = _result_kind(result, who)
    want = GateGenerator if kind == "gates" else TrackGenerator
    if not isinstance(generator, want) or (
        kind == "track" and isinstance(generator, GateGenerator)
    ):
        raise TypeError(
            f"{who}: generator must be the {want.__name__} that made the "
            f"{type(result).__name__}, got {type(generator).__name__}"
        )
    if generator.num_envs != result.num_envs or _n_max(generator.result) != _n_max(result):
        raise ValueError(
            f"{who}: the generator's batch ({generator.num_envs} envs, stride "
            f"{_n_max(generator.result)}) differs from the result's ({result.num_envs} envs, "
            f"stride {_n_max(result)}); pass the generator that made it"
        )
    spec = generator.spec
    arrays: dict[str, np.ndarray] = {}
    stages = []
    why_not = None
    for st in spec.stages:
        options = {}
        for key, value in st.options.items():
            if isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
                # an array option (the real_track sampler's circuit table) is saved as an array
                ref = f"options.{st.name}.{key}"
                arrays[ref] = value.copy()
                options[key] = {_ARRAY_REF: ref}
            elif _jsonable(value):
                options[key] = value
            else:
                why_not = f"stage {st.name!r} option {key!r} is not a JSON value or an array"
                options[key] = repr(value)
        stages.append({"kind": st.kind, "name": st.name, "options": options})
    config = dataclasses.asdict(spec.config)
    if not _jsonable(config):
        why_not = why_not or "a config value is not a JSON value"
        config = {k: v if _jsonable(v) else repr(v) for k, v in config.items()}
    record = {
        "class": type(generator).__name__,
        "config_type": type(spec.config).__name__,
        "config": config,
        "family": spec.family,
        "stages": stages,
        "randomize": [[name, list(lo_hi)] for name, lo_hi in spec.randomize],
        "live_ranges": {name: list(generator.randomizers[name]) for name in generator.randomizers},
        "device": str(generator.device),
        "rebuildable": why_not is None,
        "why_not": why_not,
    }
    arrays["seeds"] = generator.seeds.seeds.numpy().astype(np.int32)
    arrays["epochs"] = result.generation.numpy().astype(np.int32)
    for name in generator.params:
        arrays[f"params.{name}"] = generator.params[name].numpy().copy()
    for name, arr in generator.inputs.items():
        if name != "regen_mask":
            arrays[f"inputs.{name}"] = arr.numpy().copy()
    return record, arrays


def _collect(result, generator, who: str) -> tuple[dict, dict[str, np.ndarray]]:
    import track_gen

    kind = _result_kind(result, who)
    arrays = {
        f"result.{f.name}": getattr(result, f.name).numpy().copy()
        for f in dataclasses.fields(result)
    }
    header = {
        "format": BATCH_FORMAT,
        "version": BATCH_VERSION,
        "kind": kind,
        "num_envs": int(result.num_envs),
        "n_max": int(_n_max(result)),
        "track_gen_version": track_gen.__version__,
        "warp_version": wp.config.version,
        "generator": None,
    }
    if generator is not None:
        record, extra = _generator_record(result, generator, who)
        header["generator"] = record
        arrays.update(extra)
    return header, arrays


# ----------------------------------------------------------------------------- writers
def write_npz(result, path, generator=None) -> None:
    """Write a whole batch as a NumPy ``.npz`` archive (uncompressed, no pickles).

    Args:
        result: a :class:`~track_gen.Track` or :class:`~track_gen.GateSequence`.
        path: str or ``os.PathLike`` ending in ``.npz`` (its folder must exist).
        generator: optional :class:`~track_gen.TrackGenerator` /
            :class:`~track_gen.GateGenerator` that made ``result``: its config, stages,
            randomized ranges, seeds, parameters and inputs are saved, with the epochs of
            ``result.generation``, so :func:`rebuild` can reproduce the batch.

    Entries: ``header`` (a JSON string: format, version, kind, num_envs, n_max, library
    versions, the generator record or null), ``result.<field>`` for every result field,
    and with a generator ``seeds``, ``epochs``, ``params.<name>``, ``inputs.<name>``.
    Written to a temporary file and renamed (no partial file on failure).

    Raises:
        TypeError: ``result`` / ``generator`` / ``path`` of the wrong kind.
        ValueError: a generator whose batch shape differs from ``result``; a path not ending
            in ``.npz``.
        OSError: ``path`` refused as :func:`~track_gen.io.write_tum` refuses it (no such
            folder, a folder, not writable).
    """
    header, arrays = _collect(result, generator, "write_npz")
    p = check_out_path("path", path, (".npz",))
    payload = {"header": np.array(json.dumps(header))}
    payload.update(arrays)

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            np.savez(f, **payload)

    atomic_write(p, write)


def _to_json_array(a: np.ndarray) -> dict:
    flat = a.reshape(-1)
    if flat.dtype.kind == "f":
        data = [float(v) if math.isfinite(v) else None for v in flat.tolist()]
    else:
        data = [int(v) for v in flat.tolist()]
    return {"dtype": str(a.dtype), "shape": list(a.shape), "data": data}


def _gate_courses(gates: GateSequence) -> list[dict]:
    E, m = gates.num_envs, gates.max_gates
    host = {
        k: getattr(gates, k).numpy()
        for k in ("position", "forward", "orientation", "half_size", "count", "valid")
    }
    fail = gates.fail_mask.numpy()
    gen = gates.generation.numpy()
    out = []
    for e in range(E):
        course = {
            "env": e,
            "valid": int(host["valid"][e]),
            "fail_mask": int(fail[e]),
            "generation": int(gen[e]),
            "gates": [],
        }
        if course["valid"]:
            for i in range(e * m, e * m + int(host["count"][e])):
                hs = float(host["half_size"][i])
                course["gates"].append(
                    {
                        "position": [float(v) for v in host["position"][i]],
                        "orientation_xyzw": [float(v) for v in host["orientation"][i]],
                        "forward": [float(v) for v in host["forward"][i]],
                        "half_size": hs,
                        "width": 2.0 * hs,
                    }
                )
        out.append(course)
    return out


def write_json(result, path, generator=None) -> None:
    """Write a whole batch as one JSON file (standard JSON: NaN is written ``null``).

    Same contents and arguments as :func:`write_npz` (``path`` ending in ``.json``): a
    ``header`` object, an ``arrays`` object of ``{"dtype", "shape", "data"}`` entries (``data``
    flat, row-major; float32 values written exactly). For a
    :class:`~track_gen.GateSequence` it adds ``courses``: per env ``{env, valid, fail_mask,
    generation, gates}`` with, for a valid env, each gate's ``position`` (track units),
    ``orientation_xyzw`` (local x = forward, y = left, z = up), ``forward``, ``half_size`` and
    ``width``.
    """
    header, arrays = _collect(result, generator, "write_json")
    p = check_out_path("path", path, (".json",))
    doc: dict[str, Any] = {
        "header": header,
        "arrays": {k: _to_json_array(v) for k, v in arrays.items()},
    }
    if isinstance(result, GateSequence):
        doc["courses"] = _gate_courses(result)
    atomic_write_text(p, json.dumps(doc, allow_nan=False, separators=(",", ":")))


# ----------------------------------------------------------------------------- reading
def _bad(where: str, what: str) -> ValueError:
    return ValueError(f"{where}: not a track_gen batch file ({what})")


def _load_npz(where: str, raw: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError, KeyError) as exc:
        raise _bad(where, f"unreadable npz: {exc}") from None
    if "header" not in data:
        raise _bad(where, "no header entry")
    header = data.pop("header")
    if header.shape != () or header.dtype.kind != "U":
        raise _bad(where, f"the header entry is a {header.dtype} array, not a JSON string")
    try:
        header = json.loads(str(header))
    except (ValueError, TypeError, RecursionError) as exc:
        raise _bad(where, f"header is not JSON: {exc}") from None
    return header, data


#: Python types a JSON array's ``data`` may hold, by dtype kind (null is NaN).
_JSON_ELEMENTS = {"i": {int}, "u": {int}, "f": {int, float, type(None)}}


def _json_array(entry) -> np.ndarray:
    """One ``{"dtype", "shape", "data"}`` entry as an array; ValueError saying what is wrong
    (a dtype that is not a real number type, a shape that does not hold the data, an
    element of another kind than the dtype's, or one beyond its range: never converted)."""
    if not isinstance(entry, dict) or not {"dtype", "shape", "data"} <= set(entry):
        raise ValueError("not a {dtype, shape, data} object")
    if not isinstance(entry["dtype"], str):
        raise ValueError(f"dtype {entry['dtype']!r:.40} is not a NumPy dtype name")
    try:
        dtype = np.dtype(entry["dtype"])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"dtype {entry['dtype']!r:.40}: {exc}") from None
    if dtype.kind not in _JSON_ELEMENTS:
        raise ValueError(f"dtype {dtype} is not an int or float dtype")
    shape, data = entry["shape"], entry["data"]
    if not isinstance(shape, list) or not all(is_int(n) and n >= 0 for n in shape):
        raise ValueError(f"shape {shape!r:.40} is not a list of sizes >= 0")
    if not isinstance(data, list) or math.prod(shape) != len(data):
        size = len(data) if isinstance(data, list) else type(data).__name__
        raise ValueError(f"shape {shape} does not hold the data ({size} values)")
    kinds = set(map(type, data))
    wrong = kinds - _JSON_ELEMENTS[dtype.kind]
    if wrong:
        bad = next(v for v in data if type(v) in wrong)
        want = "ints" if dtype.kind in "iu" else "numbers or null (NaN)"
        raise ValueError(f"holds {type(bad).__name__} {bad!r:.40}: {dtype} data must be {want}")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if data and (min(data) < info.min or max(data) > info.max):
            v = min(data) if min(data) < info.min else max(data)
            raise ValueError(f"holds {v}, beyond the {dtype} range [{info.min}, {info.max}]")
        return np.array(data, dtype=dtype).reshape(shape)
    try:
        wide = np.array([np.nan if v is None else float(v) for v in data], dtype=np.float64)
    except OverflowError:
        raise ValueError("holds an int beyond the float64 range") from None
    with np.errstate(over="ignore"):
        arr = wide.astype(dtype)
    over = np.flatnonzero(np.isinf(arr) & np.isfinite(wide))
    if over.size:
        raise ValueError(f"holds {wide[over[0]]!r}, beyond the {dtype} range")
    return arr.reshape(shape)


def _load_json(where: str, raw: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise _bad(where, f"invalid JSON: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("arrays"), dict):
        raise _bad(where, "no arrays object")
    arrays = {}
    for name, entry in doc["arrays"].items():
        try:
            arrays[name] = _json_array(entry)
        except ValueError as exc:
            raise _bad(where, f"array {name!r}: {exc}") from None
    return doc.get("header"), arrays


def _in_file(where: str, check, *args):
    """``check(*args)`` (a checker of ``track_gen.core.checks``), its TypeError or ValueError
    re-raised as a ValueError naming the file: a file's content is a value."""
    try:
        return check(*args)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None


def _exact_ints(a: np.ndarray):
    """``a``, a uint64 array as a list of Python ints (so a value beyond int64 is refused by
    the range checks instead of wrapping to a negative int64)."""
    return a.tolist() if a.dtype == np.uint64 else a


def _check_epochs(name: str, values, count: int) -> np.ndarray:
    """``values`` as int32 ``[count]`` epochs: each -1 (never built) or an epoch in
    ``[0, INT32_MAX]`` (the range of ``effective_seed``'s epoch); floats, bools and values
    that would wrap are refused."""
    host = host_values(name, values, "int")
    if host.shape[0] != count:
        raise ValueError(f"{name} has {host.shape[0]} entries, expected {count} (one per env)")
    if host.size:
        lo, hi = int(min(host.tolist())), int(max(host.tolist()))
        if lo < -1 or hi > INT32_MAX:
            bad = lo if lo < -1 else hi
            raise ValueError(
                f"{name} holds {bad}, out of range: an epoch is -1 (never built) or in "
                f"[0, {INT32_MAX}]"
            )
    return host.astype(np.int64).astype(np.int32)


def _check_per_env(name: str, values, count: int) -> np.ndarray:
    """``values`` as ``[count]`` real numbers (bools, strings, other shapes refused), the
    array kept as stored; the range is the generator's to check (:func:`rebuild`)."""
    host = host_values(name, values, "float")
    if host.shape[0] != count:
        raise ValueError(f"{name} has {host.shape[0]} entries, expected {count} (one per env)")
    return values


def _check_numeric(name: str, a: np.ndarray) -> np.ndarray:
    """An array of real numbers (int or float dtype; not bool, complex, str, ...)."""
    if a.dtype.kind not in "iuf":
        raise TypeError(f"{name} has dtype {a.dtype}: expected an int or float array")
    return a


def _header_shape(where: str, header: dict) -> tuple[int, int]:
    """``(num_envs, n_max)`` of the header, checked (ints, not bools, in range)."""
    try:
        E = NUM_ENVS.check(header.get("num_envs"), "num_envs")
        n_max = check_int("n_max", header.get("n_max"), 1, INT32_MAX)
    except (TypeError, ValueError) as exc:
        raise _bad(where, str(exc)) from None
    return E, n_max


def _batch_limit(head: bytes) -> tuple[int, str]:
    """``(largest size, what)`` of a batch file starting with ``head``: an npz (a zip
    archive, ``PK``) or JSON, told apart as :func:`read_batch` tells them apart."""
    if head[:2] == b"PK":
        return MAX_BATCH_NPZ_BYTES, "npz batch file"
    return MAX_BATCH_JSON_BYTES, "JSON batch file"


def read_batch(path) -> BatchFile:
    """Read a file written by :func:`write_npz` or :func:`write_json` (told apart by content).

    Every value is checked as the same value passed in code would be, and nothing is
    converted: seeds by the seed checker (ints in the int32 range: a float, a bool, NaN or
    ``2**40`` is refused, never cast), epochs as -1 or ints in ``[0, 2**31 - 1]``, parameters
    as one real number per env, result, input and option arrays as int or float arrays of
    the batch's length; a JSON array's elements must be of its dtype's kind and fit it.

    Raises:
        TypeError: ``path`` is not a str / ``os.PathLike``.
        FileNotFoundError: no file at ``path``; IsADirectoryError: ``path`` is a folder.
        ValueError: not a regular file (a device, a FIFO, a socket: refused without reading
            it); a file larger than :data:`~track_gen.io.paths.MAX_BATCH_NPZ_BYTES` (8 GiB,
            an npz) or :data:`~track_gen.io.paths.MAX_BATCH_JSON_BYTES` (1 GiB, JSON),
            refused before reading it; not a batch file of this layout, or a value the
            library refuses: the message names the file, the entry and what is wrong (the
            checker's own words).
    """
    _, raw = read_bytes("path", path, "read_batch", "batch file", max_bytes=_batch_limit)
    where = os.fspath(path)
    header, data = _load_npz(where, raw) if raw[:2] == b"PK" else _load_json(where, raw)
    if not isinstance(header, dict) or header.get("format") != BATCH_FORMAT:
        raise _bad(where, f"format is not {BATCH_FORMAT!r}")
    version = header.get("version")
    if not is_int(version) or version != BATCH_VERSION:
        raise _bad(where, f"layout version {version!r:.40}, expected {BATCH_VERSION}")
    kind = header.get("kind")
    cls = {"track": Track, "gates": GateSequence}.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise _bad(where, f"kind {kind!r:.40}")
    E, n_max = _header_shape(where, header)
    arrays = {}
    for f in dataclasses.fields(cls):
        a = data.get(f"result.{f.name}")
        if a is None or a.shape[:1] not in ((E,), (E * n_max,)):
            raise _bad(where, f"result.{f.name} missing or of the wrong length")
        arrays[f.name] = _in_file(where, _check_numeric, f"result.{f.name}", a)
    gen = header.get("generator")
    if gen is not None and not isinstance(gen, dict):
        raise _bad(where, "the generator record is not an object")
    out = BatchFile(
        path=where,
        kind=kind,
        num_envs=E,
        n_max=n_max,
        arrays=arrays,
        generator=gen,
        meta={k: v for k, v in header.items() if k != "generator"},
    )
    if gen is not None:
        for name in ("seeds", "epochs"):
            if name not in data:
                raise _bad(where, f"{name} missing")
        out.seeds = _in_file(where, check_seed_values, "seeds", _exact_ints(data["seeds"]), E)
        out.epochs = _in_file(where, _check_epochs, "epochs", _exact_ints(data["epochs"]), E)
        for k, v in data.items():
            if k.startswith("params."):
                out.params[k[7:]] = _in_file(where, _check_per_env, k, v, E)
            elif k.startswith("inputs."):
                out.inputs[k[7:]] = _in_file(where, _check_numeric, k, v)
            elif k.startswith("options."):
                out.options[k] = _in_file(where, _check_numeric, k, v)
    return out


# ----------------------------------------------------------------------------- rebuild
def rebuild(path, device=None, *, verify: bool = True, registry=None):
    """A generator whose ``result`` reproduces a saved batch.

    Builds a :class:`~track_gen.TrackGenerator` (or :class:`~track_gen.GateGenerator`) from
    the file's config, stages and randomized ranges, writes back the seeds, the dynamic
    parameters, the live randomizer ranges and the inputs, sets every env's epoch to the one
    it was built with (``result.generation``) and regenerates the built envs with
    ``generate(advance=False)`` (a masked call when some env was never built, so those stay
    unbuilt as in the file).

    Args:
        path: a file from :func:`write_npz` / :func:`write_json` written with ``generator=``.
        device: Warp device for the new generator (default: the device the batch was made
            on). Outputs are bitwise reproducible on the same device only; on another device
            pass ``verify=False``.
        verify: compare every result array with the saved one (NaN padding included) and
            raise ValueError naming the arrays and envs that differ.
        registry: the stage :class:`~track_gen.pipeline.Registry` for custom stages (default:
            the process-wide registry).

    Returns:
        The generator, already generated (``gen.result`` holds the batch).

    The file's values are checked as in code before anything is generated: the seeds and
    epochs by :func:`read_batch`, every parameter through ``generator.params`` (its declared
    range), every live randomizer range through ``generator.randomizers``, every input
    against the generator's input array (name, dtype, shape); a parameter or input the
    generator does not have, or one it has and the file lacks, is refused too.

    Raises:
        TypeError: ``verify`` not a bool, ``device`` not a name / Warp device / None,
            ``registry`` not a Registry / None.
        ValueError: anything :func:`read_batch` refuses; a file without a generator record,
            a generator that could not be saved (a stage option neither a JSON value nor an
            array), a device that is not available here, a saved value the generator refuses
            (the message names the file, the entry and the declared range), or (``verify``)
            a rebuilt batch that differs from the file: the parameters or seeds were changed
            after the envs were built, another device, or another library version.
    """
    verify = check_bool("rebuild verify", verify)
    _check_device_arg(device)
    if registry is not None and not isinstance(registry, Registry):
        raise TypeError(
            f"rebuild registry must be a track_gen.pipeline.Registry or None, got "
            f"{type(registry).__name__}"
        )
    b = read_batch(path)
    where = b.path
    rec = b.generator
    if rec is None:
        raise ValueError(
            f"rebuild: {where} was written without generator=; it holds the arrays only. "
            "Write it with write_npz(result, path, generator=gen) to rebuild it"
        )
    if rec.get("rebuildable") is not True:
        raise ValueError(f"rebuild: {where} cannot be rebuilt: {str(rec.get('why_not'))[:200]}")
    family = rec.get("family")
    family = family if isinstance(family, str) else None
    cfg_cls = {"track": TrackGenConfig, "gates": GateGenConfig}.get(family)
    gen_cls = {"track": TrackGenerator, "gates": GateGenerator}.get(family)
    if cfg_cls is None or rec.get("config_type") != cfg_cls.__name__:
        raise ValueError(f"rebuild: {where}: unknown generator family {rec.get('family')!r:.40}")
    if not isinstance(rec.get("config"), dict) or not isinstance(rec.get("stages"), list):
        raise ValueError(f"rebuild: {where}: the generator record has no config or stages")
    dev = rec.get("device") if device is None else device
    try:
        dev = str(wp.get_device(dev))
    except (ValueError, RuntimeError, TypeError) as exc:
        known = ", ".join(str(d) for d in wp.get_devices())
        raise ValueError(
            f"rebuild: {where}: device {dev!r:.40} is not available here (devices: {known}); "
            "pass another device= (with verify=False: bytes match on the saving device only)"
        ) from exc
    try:
        config = cfg_cls(**{**rec["config"], "device": dev})
        stages = tuple(
            StageSpec(s["kind"], s["name"], _options(s.get("options", {}), b.options))
            for s in rec["stages"]
        )
        spec = PipelineSpec(
            config=config,
            stages=stages,
            family=family,
            randomize=tuple((n, tuple(r)) for n, r in rec.get("randomize", [])),
        )
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise ValueError(
            f"rebuild: {where}: the saved generator is not usable here: {exc}"
        ) from exc
    try:
        gen = gen_cls(spec, seeds=0, registry=registry)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"rebuild: {where}: cannot build the saved generator: {exc}") from exc
    if gen.num_envs != b.num_envs or _n_max(gen.result) != b.n_max:
        raise ValueError(f"rebuild: {where}: the config's batch shape differs from the arrays")
    built = b.epochs >= 0
    try:
        gen.seeds.set(b.seeds)
        gen.seeds.epochs.assign(np.where(built, b.epochs, 0).astype(np.int32))
        _restore_params(gen, b)
        for name, lo_hi in dict(rec.get("live_ranges", {})).items():
            gen.randomizers[name] = tuple(lo_hi)
        _restore_inputs(gen, b)
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise ValueError(
            f"rebuild: {where}: the saved state does not fit the generator: {exc}"
        ) from exc
    if built.all():
        gen.generate(advance=False)
    elif built.any():
        mask = gen.inputs["regen_mask"]
        mask.assign(built.astype(np.int32))
        gen.generate(advance=False, mask=mask)
        mask.zero_()
    if verify:
        _verify(gen.result, b)
    return gen


def _check_device_arg(device) -> None:
    """``device`` of :func:`rebuild`: None, a device name or a ``wp`` device (TypeError)."""
    if device is not None and not isinstance(device, (str, type(wp.get_device("cpu")))):
        raise TypeError(
            f"rebuild device must be a device name such as 'cpu' or 'cuda:0', a Warp device "
            f"or None, got {type(device).__name__} {device!r:.40}"
        )


def _restore_params(gen, b: BatchFile) -> None:
    """Write the file's dynamic parameter values through ``gen.params`` (checked against each
    field's declared range, as in code): every parameter of the generator, no other."""
    extra = sorted(set(b.params) - set(gen.params))
    missing = sorted(set(gen.params) - set(b.params))
    if extra:
        raise ValueError(f"params {extra} are not parameters of the generator {sorted(gen.params)}")
    if missing:
        raise ValueError(f"params {missing} of the generator are missing from the file")
    for name, values in b.params.items():
        gen.params[name] = values


def _restore_inputs(gen, b: BatchFile) -> None:
    """Copy the file's input arrays into ``gen.inputs`` (same names, dtypes and shapes)."""
    names = set(gen.inputs) - {"regen_mask"}
    extra, missing = sorted(set(b.inputs) - names), sorted(names - set(b.inputs))
    if extra or missing:
        raise ValueError(
            f"inputs {extra or missing} {'are not inputs' if extra else 'missing'} of the "
            f"generator (inputs: {sorted(names)})"
        )
    for name, values in b.inputs.items():
        want = gen.inputs[name].numpy()
        if values.dtype != want.dtype or values.shape != want.shape:
            raise ValueError(
                f"inputs.{name} is {values.dtype} {list(values.shape)}, the generator's "
                f"{want.dtype} {list(want.shape)}"
            )
        gen.inputs[name].assign(values)


def _options(saved: dict, arrays: dict[str, np.ndarray]) -> dict:
    """Stage options with the saved array references replaced by their arrays."""
    out = {}
    for key, value in dict(saved).items():
        if isinstance(value, dict) and set(value) == {_ARRAY_REF}:
            value = arrays[value[_ARRAY_REF]]  # KeyError: a reference without its array
        out[key] = value
    return out


def _verify(result, b: BatchFile) -> None:
    bad = []
    envs: set[int] = set()
    E = b.num_envs
    for f in dataclasses.fields(result):
        got = getattr(result, f.name).numpy()
        want = b.arrays[f.name]
        if got.shape != want.shape or got.dtype != want.dtype:
            bad.append(f"{f.name} ({got.dtype} {got.shape} vs {want.dtype} {want.shape})")
            continue
        g2 = got.reshape(E, -1)
        w2 = want.reshape(E, -1)
        if got.dtype.kind == "f":
            same = (g2 == w2) | (np.isnan(g2) & np.isnan(w2))
        else:
            same = g2 == w2
        rows = np.flatnonzero(~same.all(axis=1))
        if rows.size:
            bad.append(f.name)
            envs.update(int(e) for e in rows)
    if bad:
        shown = sorted(envs)[:8]
        raise ValueError(
            f"rebuild: {b.path}: the rebuilt batch differs from the file in {', '.join(bad)} "
            f"(envs {shown}{' ...' if len(envs) > 8 else ''}): the seeds or parameters were "
            "changed after those envs were built, or the file comes from another device or "
            "library version (pass verify=False to keep the rebuilt generator anyway)"
        )
