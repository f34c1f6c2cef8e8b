"""Every per-env array a course holds, for tests that check what a call changed."""

from __future__ import annotations

import dataclasses

import numpy as np
import warp as wp


def course_rows(course, *, seeds: bool = False, inputs: bool = False) -> dict[str, np.ndarray]:
    """Every per-env ``wp.array`` of ``course`` as ``[E, -1]`` host copies, by name: the
    generator result, and each component's utility and result (dataclass results walked),
    plus the seeds and epochs (``seeds``) and the course's mask inputs (``inputs``)."""
    E = course.result.num_envs
    out: dict[str, np.ndarray] = {}

    def rows(arr) -> np.ndarray:
        return arr.numpy().reshape(E, -1).copy()

    def walk(prefix, obj):
        for key, val in vars(obj).items():
            if isinstance(val, wp.array) and val.shape[0] >= E and val.shape[0] % E == 0:
                out[f"{prefix}.{key}"] = rows(val)
            elif dataclasses.is_dataclass(val) and not isinstance(val, type):
                walk(f"{prefix}.{key}", val)

    walk("result", course.result)
    for name, comp in course.components.items():
        for part in ("utility", "result"):
            obj = getattr(comp, part)
            if obj is not None and hasattr(obj, "__dict__"):
                walk(f"{name}.{part}", obj)
    if seeds:
        out["seeds"] = rows(course.seeds.seeds)
        out["epochs"] = rows(course.seeds.epochs)
    if inputs:
        for name, arr in course.inputs.items():
            out[f"inputs.{name}"] = rows(arr)
    return out
