"""A per-env mixture of samplers: each env's (seed, epoch) picks the sampler of its course.

Built with ``presets.track_mix({"bezier": 2, "polar": 1}, num_envs=...)``: every env a
regeneration rebuilds draws a sampler with probability proportional to its weight (from a
stream of its effective seed), and only that sampler writes the env's loop. The children are
ordinary registered samplers (plugins included); their dynamic fields keep their own names
(``"bezier.rad"``, ``"polar.scale"``) and can be randomized like any other field.
``diagnostics["mix.choice"]`` (int32 ``[E]``) is the index, in the given order, of the
sampler that built each env's current course.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import warp as wp

from ...seeds import stage_rng
from ..stage import Stage, Workspace

wp.set_module_options({"enable_backward": False})

SALT_MIX = wp.constant(wp.uint32(0x3A1C5003))


@wp.kernel
def _choose_kernel(
    active: wp.array(dtype=wp.int32),
    eff_seed: wp.array(dtype=wp.int32),
    cumulative: wp.array(dtype=wp.float32),
    num_choices: int,
    num_envs: int,
    choice_out: wp.array(dtype=wp.int32),
    child_active_out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    on = active[e]
    k = int(0)
    if on != 0:
        st = stage_rng(eff_seed[e], SALT_MIX)
        u = wp.randf(st)
        k = num_choices - 1
        for c in range(num_choices - 1):
            if u < cumulative[c] and k == num_choices - 1:
                k = c
        choice_out[e] = k
    for c in range(num_choices):
        flag = 0
        if on != 0 and c == k:
            flag = 1
        child_active_out[c * num_envs + e] = flag


def _parse_choices(name: str, generators) -> tuple[tuple[str, float], ...]:
    if generators is None:
        raise ValueError(
            f"stage {name!r} needs options={{'generators': {{name: weight}}}}; "
            "build it with presets.track_mix({...})"
        )
    items = (
        list(generators.items())
        if hasattr(generators, "items")
        else [(g, 1.0) if isinstance(g, str) else tuple(g) for g in generators]
    )
    if not items:
        raise ValueError(f"{name}: generators is empty")
    out = []
    for kind, w in items:
        if not isinstance(kind, str) or not kind:
            raise TypeError(f"{name}: generator names must be non-empty str, got {kind!r}")
        w = float(w)
        if not math.isfinite(w) or w <= 0.0:
            raise ValueError(f"{name}: weight of {kind!r} = {w} must be > 0")
        out.append((kind, w))
    kinds = [k for k, _ in out]
    if len(set(kinds)) != len(kinds):
        raise ValueError(f"{name}: a generator is listed twice in {kinds}")
    return tuple(out)


class SamplerMix(Stage):
    """Per-env mixture of registered samplers (``"mix"``)."""

    role = "sampler"

    def __init__(self, name, config, options=None):
        super().__init__(name, config, options)
        self.choices = _parse_choices(name, self.options.get("generators"))
        self.children: list[Stage] = []
        self._host: list[str] = []

    def resolve(self, registry) -> None:
        for kind, _ in self.choices:
            entry = registry.get(kind)
            if entry.cls.role != "sampler" or issubclass(entry.cls, SamplerMix):
                raise ValueError(
                    f"{self.name}: {kind!r} is not a sampler that can be mixed; "
                    f"samplers: {registry.samplers()}"
                )
            child = entry.cls(kind, self.config, {})
            child.resolve(registry)
            if not entry.capturable:
                self._host.append(kind)
            self._host += child.host_stages()
            self.children.append(child)

    def param_groups(self):
        groups = []
        for child in self.children:
            groups += child.param_groups()
        return groups

    def host_stages(self) -> list[str]:
        return list(self._host)

    def allocate(self, ws: Workspace) -> None:
        E, dev = ws.layout.num_envs, ws.layout.device
        K = len(self.children)
        w = np.array([wt for _, wt in self.choices], np.float64)
        self.cumulative = wp.array(
            (np.cumsum(w) / w.sum()).astype(np.float32), dtype=wp.float32, device=dev
        )
        self.choice = wp.zeros(E, dtype=wp.int32, device=dev)
        self.child_active = wp.zeros(K * E, dtype=wp.int32, device=dev)
        self.subs = [
            dataclasses.replace(ws, active=self.child_active[k * E : (k + 1) * E]) for k in range(K)
        ]
        for child, sub in zip(self.children, self.subs, strict=True):
            child.allocate(sub)
        ws.diagnostics[f"{self.name}.choice"] = self.choice
        self._child_params = None

    def enqueue(self, ws: Workspace, params: dict) -> None:
        E = ws.layout.num_envs
        if self._child_params is None:
            self._child_params = []
            for child in self.children:
                d = {}
                for prefix, specs in child.param_groups():
                    for p in specs:
                        q = f"{prefix}.{p.name}"
                        d[q] = params[q]
                        if prefix == child.name:
                            d[p.name] = params[q]
                self._child_params.append(d)
        wp.launch(
            _choose_kernel,
            E,
            inputs=[ws.active, ws.eff_seed, self.cumulative, len(self.children), E],
            outputs=[self.choice, self.child_active],
            device=ws.layout.device,
        )
        for child, sub, cp in zip(self.children, self.subs, self._child_params, strict=True):
            child.enqueue(sub, cp)
