"""The config of :class:`~track_gen.envs.DroneRaceEnv`: :class:`DroneConfig` (the quadrotor,
its gate courses in metres, the episode, the reward, the observation), declared once per
field, and its two presets (:data:`DRONE_PRESETS`, :func:`drone_config`).

The defaults are the 5-inch racing quad (``"racing_5inch"``); ``drone_config("crazyflie")``
is the Crazyflie 2.x of lsy_drone_racing. Sources and the reasoning behind each value:
``docs/drone-racing.md``, "Presets".
"""

from __future__ import annotations

from types import MappingProxyType

from ..config import TRACK_GENERATORS
from ..core.tunable import Tunable, config_class
from ..pipeline import presets
from ..tools.next_gates.term import NextGatesTermSettings
from .base import observation_fields, observation_namespace
from .drone_kernels import STATE_DIM

__all__ = ["DRONE_PRESETS", "DroneConfig", "drone_config", "drone_gates_spec"]

#: What a refusal of the env's own buffers suggests.
ENV_BUDGET_HINT = "lower num_envs or next_gates_num_gates"
#: Largest magnitude of a reward weight (as RaceConfig's).
REWARD_HI = 1.0e6


def _f(name, default, lo, hi, unit, doc) -> Tunable:
    return Tunable(name, default, lo=lo, hi=hi, unit=unit, doc=doc)


def _axes(name, default, lo, hi, unit, doc) -> Tunable:
    return Tunable(name, default, kind="floats", length=(3, 3), lo=lo, hi=hi, unit=unit, doc=doc)


def _weight(name: str, default: float, unit: str, doc: str) -> Tunable:
    return Tunable(name, default, lo=-REWARD_HI, hi=REWARD_HI, unit=unit, doc=doc)


# ------------------------------------------------------------------------------ the quad
DT = _f("dt", 0.02, 1.0e-4, 1.0, "s", "the control step (one action per step).")
SUBSTEPS = Tunable(
    "substeps", 4, lo=1, hi=64, unit="substeps", doc="integration substeps per control step."
)
GRAVITY = _f("gravity", 9.81, 0.1, 100.0, "m/s^2", "gravity along -z.")
THRUST_MIN = _f(
    "thrust_min", 0.0, 0.0, 1.0e3, "m/s^2", "collective thrust per unit mass at action -1."
)
THRUST_MAX = _f(
    "thrust_max",
    39.24,
    0.1,
    1.0e3,
    "m/s^2",
    "collective thrust per unit mass at action +1 (thrust-to-weight times gravity; >= 1.05 "
    "gravity). Action 0 hovers.",
)
MAX_RATE = _axes(
    "max_rate",
    (12.0, 12.0, 6.0),
    1.0e-3,
    100.0,
    "rad/s",
    "body rates (roll, pitch, yaw) at action +-1.",
)
TAU_THRUST = _f("tau_thrust", 0.04, 1.0e-4, 10.0, "s", "time constant of the thrust's lag.")
TAU_RATE = _f("tau_rate", 0.03, 1.0e-4, 10.0, "s", "time constant of the body rates' lag.")
DRAG = _axes(
    "drag",
    (0.3, 0.3, 0.5),
    0.0,
    100.0,
    "1/s",
    "linear drag per body axis (x, y, z): acceleration -drag * v along each (velocity in the "
    "body frame).",
)
RADIUS = _f(
    "radius", 0.15, 1.0e-3, 10.0, "m", "the drone's collision sphere (gate frames, ground)."
)
MAX_SPEED = _f(
    "max_speed",
    30.0,
    1.0e-3,
    1.0e3,
    "m/s",
    "the scale of the velocity columns (velocity / max_speed); not a limit.",
)
# ------------------------------------------------------------------------------ the course
GENERATOR = Tunable(
    "generator",
    "bezier",
    choices=tuple(g for g in TRACK_GENERATORS if g != "circuit"),
    doc="the sampler of the gate loop (presets.gates(generator=...)).",
)
SCALE = _f(
    "scale", 20.0, 0.1, 1.0e4, "m", "course size: the gate loop's longest side is 1.44 * scale."
)
GATE_WIDTH = _f("gate_width", 1.5, 0.01, 100.0, "m", "the gates' square opening.")
GATE_SPACING = _f(
    "gate_spacing",
    2.5,
    0.0,
    1.0e3,
    "m",
    "gates are pushed apart to at least this distance in plan view (2 * gate_radius).",
)
Z_MIN = _f("z_min", 1.5, 0.0, 1.0e3, "m", "lowest gate centre above the ground.")
Z_MAX = _f("z_max", 4.0, 0.0, 1.0e3, "m", "highest gate centre (uniform altitudes between).")
NUM_GATES_MIN = Tunable("num_gates_min", 6, lo=4, hi=32, unit="gates", doc="fewest gates.")
NUM_GATES_MAX = Tunable("num_gates_max", 10, lo=4, hi=32, unit="gates", doc="most gates.")
GATE_COLLISION = Tunable(
    "gate_collision",
    "frame",
    choices=("frame", "posts"),
    doc="'frame': the gate frames' four members (tools.FrameCollision) against the drone's "
    "sphere; 'posts': infinitely tall posts of radius frame_thickness / 2 at the bar ends "
    "(tools.DiscCollision) against the drone's square in plan view.",
)
FRAME_THICKNESS = _f(
    "frame_thickness", 0.1, 1.0e-3, 10.0, "m", "width of a gate frame's members (or posts)."
)
FRAME_DEPTH = _f("frame_depth", 0.05, 1.0e-3, 10.0, "m", "depth of a gate frame's members.")
BOUNDS_MARGIN = _f(
    "bounds_margin",
    5.0,
    0.0,
    1.0e4,
    "m",
    "the bounding volume: the gates' (and the spawn's) box grown by this margin, floored at "
    "the ground; leaving it is a crash.",
)
SPAWN_BACK = _f("spawn_back", 2.0, 0.0, 1.0e3, "m", "spawn this far behind gate 0, hovering.")
# ------------------------------------------------------------------------------ episode
MAX_LAPS = Tunable("max_laps", 2, lo=1, hi=1000, unit="laps", doc="laps that end an episode.")
MAX_EPISODE_STEPS = Tunable(
    "max_episode_steps", 1500, lo=1, hi=10**6, unit="steps", doc="steps that time out."
)
PROGRESS_REWARD = Tunable(
    "progress_reward",
    "gate",
    choices=("gate", "line"),
    doc="what reward_progress pays for: 'gate': each metre the distance to the target gate's "
    "centre shrinks (the target switches at a pass; Song et al. 2021); 'line': each metre "
    "gained along the course line within progress_tube of it (flying beside a gate still "
    "pays). Either is at most the distance the drone's speed covers per step.",
)
REWARD_PROGRESS = _weight(
    "reward_progress",
    1.0,
    "per m",
    "reward per metre of progress (progress_reward: towards the target gate's centre, or "
    "along the course line).",
)
PROGRESS_TUBE = _f(
    "progress_tube",
    3.0,
    1.0e-3,
    1.0e4,
    "m",
    "progress along the course line counts only within this distance of the line (the "
    "episode's progress in laps; the reward's with progress_reward='line').",
)
REWARD_GATE = _weight("reward_gate", 2.0, "per gate", "reward per gate passed.")
PENALTY_CRASH = _weight("penalty_crash", 5.0, "", "subtracted on the step the drone crashes.")
PENALTY_RATE = _weight(
    "penalty_rate", 1.0e-3, "per (rad/s)^2", "subtracted per step times |body rates|^2."
)
REWARD_PAR = _weight(
    "reward_par",
    0.0,
    "per s",
    "weight of reward_par * (ds / length * par - dt) (the par's pace); nonzero plans pars.",
)
PAR = Tunable(
    "par",
    False,
    doc="plan a minimum-time par of every course (tools.MinTime: thrust_max, par_v_max, "
    "gravity; re-planned with each regeneration) for stats() and reward_par.",
)
PAR_V_MAX = _f("par_v_max", 30.0, 0.1, 1.0e3, "m/s", "the speed bound of the par planner.")

DRONE_FIELDS = (
    DT,
    SUBSTEPS,
    GRAVITY,
    THRUST_MIN,
    THRUST_MAX,
    MAX_RATE,
    TAU_THRUST,
    TAU_RATE,
    DRAG,
    RADIUS,
    MAX_SPEED,
)
COURSE_FIELDS = (
    GENERATOR,
    SCALE,
    GATE_WIDTH,
    GATE_SPACING,
    Z_MIN,
    Z_MAX,
    NUM_GATES_MIN,
    NUM_GATES_MAX,
    GATE_COLLISION,
    FRAME_THICKNESS,
    FRAME_DEPTH,
    BOUNDS_MARGIN,
    SPAWN_BACK,
)
EPISODE_FIELDS = (
    MAX_LAPS,
    MAX_EPISODE_STEPS,
    PROGRESS_REWARD,
    REWARD_PROGRESS,
    PROGRESS_TUBE,
    REWARD_GATE,
    PENALTY_CRASH,
    PENALTY_RATE,
    REWARD_PAR,
    PAR,
    PAR_V_MAX,
)


def check_rules(config) -> None:
    """The rules between fields (ValueError naming the field to change)."""
    c = config
    if c.thrust_max < 1.05 * c.gravity:
        raise ValueError(
            f"DroneConfig.thrust_max = {c.thrust_max!r} m/s^2 cannot lift the drone: it must "
            f"be >= 1.05 * gravity = {1.05 * c.gravity:.4g} m/s^2 (raise thrust_max)"
        )
    if c.thrust_min >= c.gravity:
        raise ValueError(
            f"DroneConfig.thrust_min = {c.thrust_min!r} m/s^2 must be below gravity = "
            f"{c.gravity!r} m/s^2 (action 0 hovers between them): lower thrust_min"
        )
    h = c.dt / c.substeps
    if h * max(c.drag) > 0.5:
        need = int(c.dt * max(c.drag) / 0.5) + 1
        raise ValueError(
            f"DroneConfig.substeps = {c.substeps}: a substep of {h:.4g} s times the largest "
            f"drag {max(c.drag)!r} 1/s exceeds 0.5 (the explicit drag step loses stability): "
            f"raise substeps to >= {need} or lower dt"
        )
    if 2.0 * c.radius >= c.gate_width:
        raise ValueError(
            f"DroneConfig.radius = {c.radius!r} m: the drone cannot pass a {c.gate_width!r} m "
            "gate: raise gate_width or lower radius"
        )
    if c.z_min > c.z_max:
        raise ValueError(
            f"DroneConfig.z_min = {c.z_min!r} m must be <= z_max = {c.z_max!r} m: lower z_min"
        )
    if c.z_min < 0.5 * c.gate_width + c.radius:
        raise ValueError(
            f"DroneConfig.z_min = {c.z_min!r} m puts a gate's opening within the drone's radius "
            f"of the ground: raise z_min to >= gate_width / 2 + radius = "
            f"{0.5 * c.gate_width + c.radius:.4g} m"
        )
    if c.num_gates_min > c.num_gates_max:
        raise ValueError(
            f"DroneConfig.num_gates_min = {c.num_gates_min} must be <= num_gates_max = "
            f"{c.num_gates_max}: lower num_gates_min"
        )
    if c.frame_thickness >= c.gate_width:
        raise ValueError(
            f"DroneConfig.frame_thickness = {c.frame_thickness!r} m leaves no opening in a "
            f"{c.gate_width!r} m gate: lower frame_thickness"
        )


DroneConfig = config_class(
    "DroneConfig",
    [
        ("Quadrotor (SI units)", "", DRONE_FIELDS),
        ("Gate course (metres)", "", COURSE_FIELDS),
        ("Episode and reward", "", EPISODE_FIELDS),
        (
            "Observations and sensors",
            "",
            observation_fields("the drone's body-frame state, 18 columns"),
        ),
    ],
    doc="""The quadrotor, its gate courses, the episode, the reward and the observation of a
:class:`DroneRaceEnv` (checked on construction: TypeError for a wrong kind, ValueError for a
value out of range or a broken rule between fields, naming the field).

SI units: metres, seconds, radians; thrust per unit mass in m/s^2. The defaults are the 5-inch
racing quad (``DRONE_PRESETS["racing_5inch"]``); ``drone_config("crazyflie")`` gives the
Crazyflie 2.x. ``observations`` names the observed terms in column order (default
``("state", "next_gates")``: the 18 state columns, then 7 per upcoming gate).""",
    namespace=observation_namespace(lambda c: STATE_DIM, lambda c: 1.0 / c.max_speed),
    defaults={
        "observations": ("state", "next_gates"),
        "next_gates": NextGatesTermSettings(num_gates=2, position_scale=10.0),
    },
    check=check_rules,
    module="track_gen.envs.drone",
)

#: The presets: the fields each sets (the rest keep DroneConfig's defaults). Sources:
#: docs/drone-racing.md, "Presets".
DRONE_PRESETS = MappingProxyType(
    {
        "racing_5inch": MappingProxyType({}),
        "crazyflie": MappingProxyType(
            {
                "dt": 0.02,
                "substeps": 4,
                "thrust_min": 0.0,
                "thrust_max": 19.62,
                "max_rate": (10.0, 10.0, 5.0),
                "tau_thrust": 0.05,
                "tau_rate": 0.05,
                "drag": (0.1, 0.1, 0.2),
                "radius": 0.06,
                "max_speed": 5.0,
                "scale": 3.0,
                "gate_width": 0.4,
                "gate_spacing": 0.8,
                "z_min": 0.5,
                "z_max": 1.2,
                "num_gates_min": 4,
                "num_gates_max": 6,
                "frame_thickness": 0.05,
                "frame_depth": 0.02,
                "bounds_margin": 1.0,
                "spawn_back": 0.5,
                "max_episode_steps": 1000,
                "reward_progress": 5.0,
                "progress_tube": 0.6,
                "par_v_max": 5.0,
                "next_gates_position_scale": 1.5,
            }
        ),
    }
)


def drone_config(preset: str = "racing_5inch", **fields) -> DroneConfig:
    """The :class:`DroneConfig` of ``preset`` (a key of :data:`DRONE_PRESETS`) with
    ``fields`` over it (any DroneConfig field, flat term keywords included)."""
    if not isinstance(preset, str) or preset not in DRONE_PRESETS:
        raise ValueError(
            f"preset = {preset!r} is not a drone preset: use one of {list(DRONE_PRESETS)}"
        )
    return DroneConfig(**{**DRONE_PRESETS[preset], **fields})


def drone_gates_spec(config: DroneConfig, num_envs: int, device=None, **gen_fields):
    """The gate pipeline of ``config``'s courses in metres (``presets.gates``: ``unit="m"``,
    ``scale``, ``gate_width``, ``gate_radius = gate_spacing / 2``, uniform altitudes in
    ``[z_min, z_max]``, level gates), with further ``GateGenConfig`` fields (``cpu_threads``,
    ...) from ``gen_fields``."""
    if not isinstance(config, DroneConfig):
        raise TypeError(f"config must be a DroneConfig, got {type(config).__name__}")
    kw = dict(
        num_envs=num_envs,
        device=device,
        unit="m",
        generator=config.generator,
        scale=config.scale,
        gate_width=config.gate_width,
        gate_radius=0.5 * config.gate_spacing,
        z_profile="uniform",
        z_min=config.z_min,
        z_max=config.z_max,
        num_gates_min=config.num_gates_min,
        num_gates_max=config.num_gates_max,
        gate_align="yaw_only",
    )
    kw.update(gen_fields)
    return presets.gates(**kw)
