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

import numpy as np
import warp as wp

from ..core.checks import check_float
from ..engine.stage import Stage, Workspace
from ..seeds import stage_rng

wp.set_module_options({"enable_backward": False})

SALT_MIX = wp.constant(wp.uint32(0x3A1C5003))
#: Most samplers one mix draws from.
MAX_CHOICES = 64


@wp.kernel
def _choose_kernel(
    # inputs
    active: wp.array(dtype=wp.int32),
    eff_seed: wp.array(dtype=wp.int32),
    cumulative: wp.array(dtype=wp.float32),
    # static
    num_choices: int,
    num_envs: int,
    # outputs
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
    if isinstance(generators, (str, bytes)) or not hasattr(generators, "__iter__"):
        raise TypeError(
            f"{name}: generators must be a mapping {{name: weight}} or a sequence of names, "
            f"got {type(generators).__name__} {generators!r}"
        )
    items = []
    for g in generators.items() if hasattr(generators, "items") else generators:
        if isinstance(g, str):
            items.append((g, 1.0))
        elif isinstance(g, tuple) and len(g) == 2:
            items.append(g)
        else:
            raise TypeError(f"{name}: expected a name or a (name, weight) pair, got {g!r}")
    if not items:
        raise ValueError(f"{name}: generators is empty")
    if len(items) > MAX_CHOICES:
        raise ValueError(f"{name}: {len(items)} generators, at most {MAX_CHOICES}")
    out = []
    for kind, w in items:
        if not isinstance(kind, str) or not kind:
            raise TypeError(f"{name}: generator names must be non-empty str, got {kind!r}")
        w = check_float(f"{name}: weight of {kind!r}", w, lo=0.0, hi=1.0e6, lo_open=True)
        out.append((str(kind), w))  # np.str_ -> str
    kinds = [k for k, _ in out]
    if len(set(kinds)) != len(kinds):
        raise ValueError(f"{name}: a generator is listed twice in {kinds}")
    return tuple(out)


class SamplerMix(Stage):
    """Per-env mixture of registered samplers (``"mix"``).

    Options: ``generators`` (``{name: weight}`` or names), and ``"<child>.<field>"`` to set a
    child's field (``{"bezier.rad": 0.3}``).
    """

    role = "sampler"
    OPTIONS = ("generators",)

    def __init__(self, name, config, options=None):
        options = dict(options or {})
        self.choices = _parse_choices(name, options.get("generators"))
        self._child_options: dict[str, dict] = {kind: {} for kind, _ in self.choices}
        own = {}
        kinds = sorted(self._child_options, key=len, reverse=True)
        for key, value in options.items():
            child = next((k for k in kinds if str(key).startswith(k + ".")), None)
            if child is not None:
                self._child_options[child][key[len(child) + 1 :]] = value
            else:
                own[key] = value
        super().__init__(name, config, own)
        self.children: list[Stage] = []
        self._host: list[str] = []

    def resolves(self) -> tuple[str, ...]:
        return tuple(kind for kind, _ in self.choices)

    def resolve(self, registry) -> None:
        for kind, _ in self.choices:
            entry = registry.get(kind) if kind in registry else None
            if entry is None:
                raise ValueError(
                    f"{self.name}: {kind!r} is not a registered sampler; samplers: "
                    f"{registry.samplers()}"
                )
            if entry.cls.role != "sampler" or issubclass(entry.cls, SamplerMix):
                raise ValueError(
                    f"{self.name}: {kind!r} is not a sampler that can be mixed; "
                    f"samplers: {registry.samplers()}"
                )
            child = entry.cls(kind, self.config, self._child_options[kind])
            child.resolve(registry)
            if not entry.capturable:
                self._host.append(kind)
            self._host += child.host_stages()
            self.children.append(child)

    def dynamic_fields(self):
        out = []
        for child in self.children:
            out += child.dynamic_fields()
        return out

    def host_stages(self) -> list[str]:
        return list(self._host)

    def allocate(self, ws: Workspace) -> None:
        E = ws.layout.num_envs
        K = len(self.children)
        w = np.array([wt for _, wt in self.choices], np.float64)
        self.cumulative = ws.budget.array(
            (np.cumsum(w) / w.sum()).astype(np.float32), wp.float32, f"{self.name} weights"
        )
        self.choice = ws.zeros(E, wp.int32, f"{self.name} choices")
        self.child_active = ws.zeros(K * E, wp.int32, f"{self.name} child masks")
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
            self._child_params = [child.param_arrays(params) for child in self.children]
        wp.launch(
            _choose_kernel,
            E,
            inputs=[ws.active, ws.eff_seed, self.cumulative, len(self.children), E],
            outputs=[self.choice, self.child_active],
            device=ws.layout.device,
        )
        for child, sub, cp in zip(self.children, self.subs, self._child_params, strict=True):
            child.enqueue(sub, cp)
