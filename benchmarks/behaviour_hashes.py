"""Byte hashes of the outputs a behaviour-preserving change must keep: every sampler (tracks,
gates, both layouts), segments / sdf / gates (posts, frames) / elevated / real-circuit courses
through a masked regeneration and 50 steps, RaceEnv observations and rewards over 200 steps,
every sensor term over 60 steps (eager and recorded, with a curriculum), the drone env with its
minimum-time par and the single-track car over 60 steps (eager and recorded), exported files
(json, npz, TUM, cones).
Run from a checkout: ``PYTHONPATH=. python benchmarks/behaviour_hashes.py``; a refactor that
means to keep behaviour prints the same lines (and the same ALL hash) before and after."""

import hashlib
import os
import tempfile

import numpy as np
import warp as wp

wp.config.quiet = True
import track_gen as tg  # noqa: E402
from track_gen import io, tools  # noqa: E402
from track_gen.course import Course  # noqa: E402
from track_gen.envs import DroneRaceEnv, RaceConfig, RaceEnv, drone_config  # noqa: E402
from track_gen.pipeline import presets  # noqa: E402

E = 8
TOTAL = hashlib.sha256()


def arrays(obj):
    out = []
    for name in sorted(vars(obj)):
        a = getattr(obj, name)
        if isinstance(a, wp.array):
            out.append((name, a))
    return out


def digest(*objs):
    h = hashlib.sha256()
    for obj in objs:
        for name, a in arrays(obj):
            h.update(name.encode())
            h.update(a.numpy().tobytes())
    return h.hexdigest()[:16]


def emit(name, *parts):
    line = f"{name:28s} " + " ".join(parts)
    TOTAL.update(line.encode())
    print(line, flush=True)


def hash_steps(h, env, seed, steps=60, extra=lambda env: ()):
    """``steps`` steps of ``env`` with seeded uniform actions in [-1, 1] written into
    ``env.actions``; after each, the bytes of its observations, final observations, rewards,
    done flags and final lap times, then of ``extra(env)``'s arrays, into ``h``."""
    rs = np.random.default_rng(seed)
    for _step in range(steps):
        env.actions.assign(rs.uniform(-1, 1, env.actions.shape).astype(np.float32))
        env.step()
        for a in (env.obs, env.final_obs, env.reward, env.done, env.final_lap_time, *extra(env)):
            h.update(a.numpy().tobytes())


def regen_cycle(gen):
    gen.generate()
    a = digest(gen.result)
    gen.generate(advance=True)
    b = digest(gen.result)
    m = gen.inputs["regen_mask"]
    m.assign(np.array([1, 0, 1, 0, 0, 1, 0, 0], np.int32))
    gen.generate(advance=True, mask=m)
    return a, b, digest(gen.result)


SAMPLERS = ["bezier", "polar", "hull", "voronoi", "checkpoint", "repulsive"]
for layout in ("per_env", "per_item"):
    for s in SAMPLERS:
        kw = {"repulsive_iters": 20} if s == "repulsive" else {}
        cfg = tg.TrackGenConfig(generator=s, num_envs=E, device="cpu", kernel_layout=layout, **kw)
        emit(f"track {s} {layout}", *regen_cycle(tg.TrackGenerator(cfg, seeds=11)))
for s in SAMPLERS:
    kw = {"repulsive_iters": 20} if s == "repulsive" else {}
    cfg = tg.GateGenConfig(generator=s, num_envs=E, device="cpu", gate_width=0.1, **kw)
    emit(f"gates {s}", *regen_cycle(tg.GateGenerator(cfg, seeds=2)))
mix = presets.track_mix({"bezier": 2, "polar": 1}, num_envs=E, device="cpu")
emit(
    "mix randomized",
    *regen_cycle(tg.TrackGenerator(mix.with_randomize({"bezier.rad": (0.2, 0.6)}), seeds=5)),
)

rng = np.random.default_rng(0)


def poses(n):
    p = rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32)
    p[:, 2] = 0.0
    q = rng.normal(size=(n, 4)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return p, q


def run_course(name, course, he=True):
    p, q = poses(E)
    pos = wp.array(p, dtype=wp.vec3f, device="cpu")
    rot = wp.array(q, dtype=wp.quatf, device="cpu")
    kw = {"position": pos}
    if he:
        kw.update(
            orientation=rot,
            half_extents=wp.full(E, wp.vec2f(0.05, 0.02), dtype=wp.vec2f, device="cpu"),
        )
    course.bind(**kw)
    course.generate()
    h = hashlib.sha256()
    mask = course.inputs["regen_mask"]
    for step in range(50):
        p, q = poses(E)
        pos.assign(p)
        rot.assign(q)
        course.step()
        for comp in course.components.values():
            if comp.steps and comp.result is not None:
                for _, a in arrays(comp.result):
                    h.update(a.numpy().tobytes())
        if step == 25:
            mask.assign(np.array([0, 1, 0, 0, 1, 0, 0, 0], np.int32))
            course.regenerate(mask, advance=True)
    derived = hashlib.sha256()
    for comp in course.components.values():
        if comp.result is not None and not comp.steps:
            for _, a in arrays(comp.result):
                derived.update(a.numpy().tobytes())
    emit(name, h.hexdigest()[:16], derived.hexdigest()[:16], digest(course.generator.result))


cfg = tg.TrackGenConfig(num_envs=E, device="cpu")
run_course(
    "course segments",
    Course.track(
        cfg, checkpoint_spacing=0.3, collision="segments", extra=[tools.Localizer()], seeds=4
    ),
)
run_course("course sdf", Course.track(cfg, checkpoint_spacing=0.3, collision="sdf", seeds=4))
elev = tg.TrackGenConfig(num_envs=E, device="cpu", z_profile="noise", z_max=0.2)
run_course(
    "course elevated",
    Course.track(
        elev,
        checkpoint_spacing=0.3,
        collision="segments",
        extra=[tools.HeightFieldBake(32), tools.Props(kind="cone", spacing=0.2)],
        seeds=6,
    ),
)
gcfg = tg.GateGenConfig(num_envs=E, device="cpu", gate_width=0.1)
run_course("course gates posts", Course.gates(gcfg, collision=0.02, seeds=3))
run_course(
    "course gates frames",
    Course.gates(gcfg, collision=tools.FrameCollision(0.02, 0.02, 0.05), seeds=3),
    he=False,
)

t = np.linspace(0, 2 * np.pi, 300, endpoint=False)
xy = np.stack([200 * np.cos(t), 120 * np.sin(t) + 20 * np.sin(3 * t)], axis=1)
circuit = io.RealTrack(
    name="oval", xy=xy, width_left=np.full(300, 6.0), width_right=np.full(300, 5.0)
)
spec = io.tracks_spec([circuit], num_envs=E, device="cpu")
run_course(
    "course real circuit",
    Course.track(spec, checkpoint_spacing=20.0, collision="segments", seeds=1),
)

env = RaceEnv(E, "cpu", seeds=7)
env.reset()
h = hashlib.sha256()
act = wp.zeros((E, 2), dtype=wp.float32, device="cpu")
for _step in range(200):
    act.assign(rng.uniform(-1, 1, (E, 2)).astype(np.float32))
    env.step(act)
    h.update(env.obs.numpy().tobytes())
    h.update(env.reward.numpy().tobytes())
emit("race env 200 steps", h.hexdigest()[:16])

# every sensor term, noise, the racing line observed, a curriculum, eager and recorded
for observed, extra in (
    ("state+lidar+lookahead+cones+raster", {}),
    ("lidar+cones+raster", {"lidar_noise_std": 0.01, "cones_dropout": 0.2}),
    ("state+lookahead", {"lookahead_along": "racing_line", "racing_line": "observe"}),
):
    h = hashlib.sha256()
    for captured in (False, True):
        env = RaceEnv(
            6,
            "cpu",
            3,
            config=RaceConfig(observations=observed, **extra),
            captured=captured,
            curriculum={"buffer_size": 8, "replay_prob": 0.5, "score": "learnability"},
        )
        hash_steps(h, env, seed=0, extra=lambda env: (env.curriculum_signal,))
    emit(f"race sensors {observed}", h.hexdigest()[:16])

# the drone env (its minimum-time par and a curriculum) and the single-track car at 1:10, eager
# and recorded
h = hashlib.sha256()
for captured in (False, True):
    env = DroneRaceEnv(
        4,
        "cpu",
        5,
        config=drone_config("crazyflie", par=True),
        captured=captured,
        curriculum={"buffer_size": 8, "replay_prob": 0.5, "score": "learnability"},
    )
    hash_steps(h, env, seed=1, extra=lambda env: (env.par.time,))
emit("drone env 60 steps", h.hexdigest()[:16])

h = hashlib.sha256()
for captured in (False, True):
    spec = presets.circuit(
        4,
        device="cpu",
        length_min=350.0,
        length_max=700.0,
        road_width_min=1.0,
        road_width_max=1.5,
        corner_radius_median=5.2,
        corner_radius_min=1.0,
        corner_radius_max=40.0,
        spacing=0.4,
    )
    config = RaceConfig.for_vehicle("f1tenth", racing_line="par")
    env = RaceEnv(4, "cpu", 5, spec=spec, config=config, captured=captured)
    hash_steps(h, env, seed=2)
emit("single-track f1tenth 60", h.hexdigest()[:16])

gen = tg.TrackGenerator(tg.TrackGenConfig(num_envs=E, device="cpu"), seeds=9)
gen.generate()
with tempfile.TemporaryDirectory() as d:
    files = []
    io.write_npz(gen.result, os.path.join(d, "b.npz"), generator=gen)
    io.write_json(gen.result, os.path.join(d, "b.json"), generator=gen)
    io.write_tum(gen.result, 0, os.path.join(d, "t.csv"))
    io.write_cones(gen.result, 0, os.path.join(d, "c.csv"), spacing=0.2)
    parts = []
    for f in sorted(os.listdir(d)):
        data = open(os.path.join(d, f), "rb").read()
        if f.endswith(".npz"):
            z = np.load(os.path.join(d, f), allow_pickle=False)
            data = b"".join(k.encode() + z[k].tobytes() for k in sorted(z.files))
        parts.append(f"{f}:{hashlib.sha256(data).hexdigest()[:12]}")
    emit("exports", *parts)
print("ALL", TOTAL.hexdigest()[:16])
