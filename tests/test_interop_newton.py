"""track_gen.interop.newton: a course's shapes in a Newton model, written in place.

Without newton: importing track_gen (and track_gen.interop.newton) does not need it, and the
first method that does raises ImportError naming the extra. With newton (E = 4 worlds, small
grids, one module-scoped scene): a masked write changes the regenerated world only and moves
no array; the grid's heights and the props' poses against NumPy oracles of the bake and the
PropsResult; a box resting on the road sits at the baked height; probe boxes get the same in/out
verdict from Newton's contacts with the height field as from the band collision, away from
the border; a recorded write replays like the eager one; every argument is checked.
"""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import warp as wp
from hypothesis import given
from hypothesis import strategies as st

from track_gen.course import Course
from track_gen.interop.newton import GRID_SLACK, BodyPoses, NewtonCourse
from track_gen.interop.newton.fields import (
    HALF_EXTENT,
    MESHES,
    PARK_DEPTH,
    RESOLUTION,
    Z_HI,
    Z_LO,
)
from track_gen.pipeline import presets
from track_gen.tools import HeightFieldBake, Props

from .support.strategies import expected_error, values

#: every test here on the worker of the other Newton tests (tests/conftest.py says why)
pytestmark = pytest.mark.newton

try:
    import newton
except ImportError:  # newton is an optional extra ([newton], in [dev])
    newton = None

needs_newton = pytest.mark.skipif(
    newton is None, reason="newton is not installed: pip install 'track_gen[newton]'"
)

E = 4
GRADE = 0.15  # the course's z_valid_grade
PROBE = (0.08, 0.08, 0.05)  # half extents of the probe box, track units


def make_course(device="cpu") -> Course:
    """An elevated course in metres (road 1 m wide, about 6 m across, up to 0.3 m high) with
    a ditch beside the road (fill 0.3 below the lowest road), cones and walls."""
    spec = presets.track(
        num_envs=E,
        device=device,
        scale=4.0,
        half_width=0.5,
        z_profile="random_walk",
        z_base=0.15,
        z_min=0.0,
        z_max=0.3,
        z_max_step=0.08,
        z_valid_grade=GRADE,
    )
    return Course.track(
        spec,
        checkpoint_spacing=2.0,
        collision="segments",
        extra=(
            HeightFieldBake(96, fill=-0.3),
            Props("cone", spacing=3.0, max_props=24),
            Props("wall", spacing=1.0, max_props=48, name="walls"),
        ),
        seeds=5,
    )


# ------------------------------------------------------------------ without newton
def test_track_gen_does_not_import_newton_and_names_the_extra():
    code = """
        import sys
        sys.modules["newton"] = None  # as if it were not installed
        import track_gen, track_gen.interop, track_gen.interop.newton
        from track_gen.interop.newton import NewtonCourse
        from track_gen.course import Course
        from track_gen.pipeline import presets
        from track_gen.tools import HeightFieldBake
        course = Course.track(presets.track(num_envs=2, device="cpu"), checkpoint_spacing=0.6,
                              extra=(HeightFieldBake(16),), seeds=0)
        shapes = NewtonCourse(course)
        try:
            shapes.add_world(object(), 0)
        except ImportError as err:
            print("ImportError:", err)
    """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout.strip()
    assert out.splitlines()[-1].startswith("ImportError: track_gen.interop.newton needs Newton")
    assert "track_gen[newton]" in out
    clean = subprocess.run(
        [sys.executable, "-c", "import sys, track_gen; print('newton' in sys.modules)"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert clean.stdout.strip().splitlines()[-1] == "False"


def test_construction_refusals():
    with pytest.raises(TypeError, match="must be a track_gen.course.Course"):
        NewtonCourse("course")
    plain = Course.track(presets.track(num_envs=2, device="cpu"), checkpoint_spacing=0.6, seeds=0)
    with pytest.raises(ValueError, match="no HeightFieldBake"):
        NewtonCourse(plain)


@pytest.fixture(scope="module")
def course():
    return make_course()


def test_defaults_cover_the_largest_bake(course):
    shapes = NewtonCourse(course)
    frame = course.heightfield.field.frame.numpy()
    side = frame[:, 2].max() * course.heightfield.resolution
    assert 2 * shapes.half_extent >= GRID_SLACK * side - 1e-6
    assert shapes.cell <= frame[:, 2].max() * (1 + 1e-6)  # no coarser than the bake
    h = course.heightfield.field.height.numpy()
    assert shapes.z_lo <= h.min() and shapes.z_hi >= h.max()  # fill and road inside
    assert shapes.z_lo <= -0.3 and shapes.z_hi >= 0.3  # the fill and the declared z_max
    assert shapes.park_z == pytest.approx(shapes.z_lo - 2 * shapes.half_extent)
    assert shapes.prop_groups == ("props", "walls")


FIELDS = {
    "meshes": MESHES,
    "resolution": RESOLUTION,
    "half_extent": HALF_EXTENT,
    "z_lo": Z_LO,
    "z_hi": Z_HI,
    "park_depth": PARK_DEPTH,
}


@pytest.mark.fuzz
@given(name=st.sampled_from(sorted(FIELDS)), data=st.data())
def test_keyword_inputs(course, name, data):
    """Every keyword is checked against its declaration (TypeError / ValueError naming it);
    an accepted value builds (nothing is allocated past the two [E] arrays)."""
    t = FIELDS[name]
    value = data.draw(values(t, lookup=None))
    want = expected_error(t, value, lookup=None)
    kwargs = {name: value}
    if want is None and name in ("z_lo", "z_hi") and value is not None:
        kwargs = {"z_lo": min(float(value), -1.0), "z_hi": max(float(value), 1.0)}
    if want is None:
        shapes = NewtonCourse(course, **kwargs)
        assert shapes.resolution >= 2 and shapes.half_extent > 0 and shapes.z_hi >= shapes.z_lo
        assert math.isfinite(shapes.cell) and shapes.cell > 0 and math.isfinite(shapes.park_z)
    else:
        with pytest.raises(want, match=name):
            NewtonCourse(course, **kwargs)


def test_z_range_order_is_checked(course):
    with pytest.raises(ValueError, match="z_hi = 0.0 is below z_lo = 1.0"):
        NewtonCourse(course, z_lo=1.0, z_hi=0.0)


# ------------------------------------------------------------------ with newton
class Scene:
    """The course's shapes in E worlds plus one free probe box per world (XPBD)."""

    def __init__(self):
        self.course = course = make_course()
        self.shapes = shapes = NewtonCourse(course, meshes=True)
        builder = newton.ModelBuilder()
        self.probe = []
        for e in range(E):
            builder.begin_world()
            shapes.add_world(builder, e)
            body = builder.add_body(xform=wp.transform((0.0, 0.0, 5.0), wp.quat_identity()))
            builder.add_shape_box(body, hx=PROBE[0], hy=PROBE[1], hz=PROBE[2])
            self.probe.append(body)
            builder.end_world()
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Heightfield-vs-heightfield")
            self.model = builder.finalize(device="cpu")
        shapes.attach(self.model)
        self.pipeline = newton.CollisionPipeline(self.model)
        self.contacts = self.pipeline.contacts()
        self.solver = newton.solvers.SolverXPBD(self.model, iterations=4)
        self.state0, self.state1 = self.model.state(), self.model.state()
        self.control = self.model.control()
        self.poses = BodyPoses(self.probe, "cpu")
        self.half = wp.full(E, wp.vec2f(PROBE[0], PROBE[1]), dtype=wp.vec2f, device="cpu")
        course.bind(
            position=self.poses.position, orientation=self.poses.orientation, half_extents=self.half
        )

    def world_rows(self) -> dict[str, list[np.ndarray]]:
        """Per world: its static shapes' transforms, scales and radii, its elevation block."""
        m = self.model
        world, body = m.shape_world.numpy(), m.shape_body.numpy()
        out = {k: [] for k in ("transform", "scale", "radius", "elevation")}
        elev = m.heightfield_elevations.numpy()
        for e in range(E):
            rows = np.flatnonzero((world == e) & (body == -1))
            out["transform"].append(m.shape_transform.numpy()[rows].copy())
            out["scale"].append(m.shape_scale.numpy()[rows].copy())
            out["radius"].append(m.shape_collision_radius.numpy()[rows].copy())
            start, n = self.block(e)
            out["elevation"].append(elev[start : start + n].copy())
        return out

    def block(self, e: int) -> tuple[int, int]:
        m = self.model
        sid = self.shapes.shapes(e)["heightfield"]
        h = m.heightfield_data.numpy()[m.shape_heightfield_index.numpy()[sid]]
        return int(h["data_offset"]), int(h["nrow"]) * int(h["ncol"])

    def place(self, pos: np.ndarray, yaw: np.ndarray) -> None:
        """Put every probe at ``pos[e]`` (its centre) with ``yaw[e]``, at rest."""
        bq = self.state0.body_q.numpy()
        for e, b in enumerate(self.probe):
            half = 0.5 * yaw[e]
            bq[b] = [*pos[e], 0.0, 0.0, math.sin(half), math.cos(half)]
        self.state0.body_q.assign(bq)
        self.state0.body_qd.zero_()

    def touching_ground(self) -> np.ndarray:
        """Per world: whether Newton's contacts hold a penetrating pair (probe, its height
        field): separation ``dot(p1 - p0, normal) - margin0 - margin1 < 0`` with the points in
        world space (the pipeline also reports speculative contacts up to the shapes' gap,
        0.1 m by default: those are not touching)."""
        c = self.contacts
        self.pipeline.collide(self.state0, c)
        n = int(c.rigid_contact_count.numpy()[0])
        a, b = c.rigid_contact_shape0.numpy()[:n], c.rigid_contact_shape1.numpy()[:n]
        p0, p1 = c.rigid_contact_point0.numpy()[:n], c.rigid_contact_point1.numpy()[:n]
        normal = c.rigid_contact_normal.numpy()[:n]
        thick = c.rigid_contact_margin0.numpy()[:n] + c.rigid_contact_margin1.numpy()[:n]
        shape_body = self.model.shape_body.numpy()
        bq = self.state0.body_q.numpy()

        def world(shape, p):
            body = shape_body[shape]
            if body < 0:
                return p
            x, y, z, w = bq[body, 3:]
            v = np.array([x, y, z])
            t = 2.0 * np.cross(v, p)
            return bq[body, :3] + p + w * t + np.cross(v, t)

        out = np.zeros(E, bool)
        for k in range(n):
            gap = np.dot(world(b[k], p1[k]) - world(a[k], p0[k]), normal[k]) - thick[k]
            for e in range(E):
                hf = self.shapes.shapes(e)["heightfield"]
                pair = {int(a[k]), int(b[k])}
                if hf in pair and any(shape_body[s] == self.probe[e] for s in pair) and gap < 0:
                    out[e] = True
        return out


@pytest.fixture(scope="module")
def scene():
    if newton is None:
        pytest.skip("newton is not installed: pip install 'track_gen[newton]'")
    return Scene()


def bake_at(field, e: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """NumPy float64 bilinear of env e's bake at plan points (texel centres; fill outside)."""
    res = field.resolution
    h = field.height.numpy().reshape(-1, res, res)[e].astype(np.float64)
    x0, y0, cell, fill = field.frame.numpy()[e].astype(np.float64)
    u, v = (x - x0) / cell - 0.5, (y - y0) / cell - 0.5
    i, j = np.floor(u).astype(int), np.floor(v).astype(int)
    a, b = u - i, v - j

    def at(ii, jj):
        inside = (ii >= 0) & (jj >= 0) & (ii < res) & (jj < res)
        return np.where(inside, h[np.clip(jj, 0, res - 1), np.clip(ii, 0, res - 1)], fill)

    return (1 - b) * ((1 - a) * at(i, j) + a * at(i + 1, j)) + b * (
        (1 - a) * at(i, j + 1) + a * at(i + 1, j + 1)
    )


@needs_newton
def test_grid_heights_match_the_bake(scene):
    """Every vertex of every world's grid holds the bake's bilinear height at its world
    position (NumPy float64 oracle), within 10 um: float32 rounding of the positions (a few
    1e-7 m) times the steepest bilinear slope (road to ditch, about 3)."""
    shapes, m, field = scene.shapes, scene.model, scene.course.heightfield.field
    R, H = shapes.resolution, shapes.half_extent
    span = shapes.z_hi - shapes.z_lo
    elev = m.heightfield_elevations.numpy()
    for e in range(E):
        start, n = scene.block(e)
        z = shapes.z_lo + elev[start : start + n].reshape(R, R).astype(np.float64) * span
        cx, cy = m.shape_transform.numpy()[shapes.shapes(e)["heightfield"]][:2]
        x0, y0, cell, _ = field.frame.numpy()[e]
        assert cx == pytest.approx(x0 + 0.5 * cell * field.resolution, abs=1e-5)
        grid = np.linspace(-H, H, R)
        x, y = np.meshgrid(cx + grid, cy + grid)  # [row (y), col (x)]
        want = np.clip(bake_at(field, e, x, y), shapes.z_lo, shapes.z_hi)
        np.testing.assert_allclose(z, want, rtol=0, atol=1e-5)
    assert (scene.shapes.clipped.numpy() == 0).all()


@needs_newton
def test_props_are_posed_and_the_rest_parked(scene):
    """Each real prop's shape: its base centre raised half its height along its local z, its
    orientation; a wall's half extents and bounding radius; slots past the count parked."""
    m, shapes = scene.model, scene.shapes
    xf, sc, rad = m.shape_transform.numpy(), m.shape_scale.numpy(), m.shape_collision_radius.numpy()
    for name in shapes.prop_groups:
        props = scene.course.components[name].result
        M = props.max_props
        pos = props.position.numpy().reshape(E, M, 3).astype(np.float64)
        quat = props.orientation.numpy().reshape(E, M, 4).astype(np.float64)
        size = props.scale.numpy().reshape(E, M, 3).astype(np.float64)
        count = props.count.numpy()
        assert (count < M).any() or name == "walls"
        for e in range(E):
            ids = np.array(shapes.shapes(e)[name])
            for k in range(M):
                row = xf[ids[k]]
                if k < count[e]:
                    q = quat[e, k] / np.linalg.norm(quat[e, k])
                    x, y, z, w = q
                    up = np.array(
                        [2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)]
                    )
                    np.testing.assert_allclose(
                        row[:3], pos[e, k] + 0.5 * size[e, k, 2] * up, atol=1e-5
                    )
                    assert abs(abs(np.dot(row[3:], q)) - 1) < 1e-5
                    if name == "walls":
                        np.testing.assert_allclose(sc[ids[k]], 0.5 * size[e, k], rtol=1e-6)
                        assert rad[ids[k]] == pytest.approx(np.linalg.norm(0.5 * size[e, k]), 1e-5)
                else:
                    assert row[2] == pytest.approx(shapes.park_z)
                    np.testing.assert_array_equal(row[3:], [0, 0, 0, 1])


@needs_newton
def test_regenerating_one_world_writes_it_in_place(scene):
    """After regenerate(mask) of one world and write(mask): the same model, every array at
    the same address, the other worlds' engine data bitwise unchanged, the regenerated
    world's heights and props changed."""
    m, course, shapes = scene.model, scene.course, scene.shapes
    ptrs = {k: (v.ptr, v.shape) for k, v in vars(m).items() if isinstance(v, wp.array)}
    before = scene.world_rows()
    mask = wp.array([0, 0, 1, 0], dtype=wp.int32, device="cpu")
    course.regenerate(mask=mask, advance=True)
    shapes.write(mask)
    after = scene.world_rows()
    assert shapes.model is m
    assert ptrs == {k: (v.ptr, v.shape) for k, v in vars(m).items() if isinstance(v, wp.array)}
    for e in range(E):
        for key in before:
            same = np.array_equal(before[key][e], after[key][e])
            if e != 2:
                assert same, (e, key)
    assert not np.array_equal(before["elevation"][2], after["elevation"][2])
    assert not np.array_equal(before["transform"][2], after["transform"][2])
    test_grid_heights_match_the_bake(scene)  # the new course, resampled
    test_props_are_posed_and_the_rest_parked(scene)


@needs_newton
def test_a_recorded_write_replays_like_the_eager_one(scene):
    """A CPU capture of write(mask) replays to the bytes the eager call writes: the engine
    arrays are put back as they were before the eager write, the masked worlds' height
    blocks, shape transforms and clipped flags poisoned, then the graph replays."""
    m, course, shapes = scene.model, scene.course, scene.shapes
    mask = wp.array([1, 0, 0, 1], dtype=wp.int32, device="cpu")
    arrays = [m.heightfield_elevations, m.shape_transform, m.shape_scale, m.shape_collision_radius]
    arrays.append(shapes.clipped)
    with wp.ScopedCapture(device="cpu") as cap:
        shapes.write(mask)
    course.regenerate(mask=mask, advance=True)
    before = [a.numpy().copy() for a in arrays]
    shapes.write(mask)
    eager = [a.numpy().copy() for a in arrays]
    poisoned = [b.copy() for b in before]
    for e in (0, 3):
        start, n = scene.block(e)
        poisoned[0][start : start + n] = np.nan
        for ids in shapes.shapes(e).values():
            poisoned[1][np.atleast_1d(ids)] = np.nan
        poisoned[4][e] = -7
    for a, host in zip(arrays, poisoned, strict=True):
        a.assign(host)
    wp.capture_launch(cap.graph)
    for a, want in zip(arrays, eager, strict=True):
        assert a.numpy().tobytes() == want.tobytes()


@needs_newton
def test_a_box_resting_on_the_road_sits_at_the_baked_height(scene):
    """A probe box dropped 2 cm above the road settles with its bottom at the bake's height
    under it, within one cell's grade (the resampling) plus 5 mm."""
    t, field, shapes = scene.course.result, scene.course.heightfield.field, scene.shapes
    n_max = t.N_max
    center = t.center.numpy().reshape(E, n_max, 3)
    count = t.count.numpy()
    pos, yaw = np.zeros((E, 3)), np.zeros(E)
    for e in range(E):
        i = count[e] // 3
        c0, c1 = center[e, i], center[e, (i + 1) % count[e]]
        yaw[e] = math.atan2(c1[1] - c0[1], c1[0] - c0[0])
        pos[e] = c0 + [0.0, 0.0, PROBE[2] + 0.02]
    scene.place(pos, yaw)
    for _ in range(90):  # 1.5 s at 60 Hz, 4 substeps
        scene.pipeline.collide(scene.state0, scene.contacts)
        for _ in range(4):
            scene.state0.clear_forces()
            scene.solver.step(scene.state0, scene.state1, scene.control, scene.contacts, 1 / 240)
            scene.state0, scene.state1 = scene.state1, scene.state0
    bq = scene.state0.body_q.numpy()[scene.probe]
    cell = max(float(field.frame.numpy()[:, 2].max()), shapes.cell)
    for e in range(E):
        p, q = bq[e, :3].astype(np.float64), bq[e, 3:].astype(np.float64)
        x, y, z, w = q
        rot = np.array(
            [
                [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
            ]
        )
        corners = np.array(
            [[sx * PROBE[0], sy * PROBE[1], -PROBE[2]] for sx in (-1, 1) for sy in (-1, 1)]
        )
        world = p + corners @ rot.T
        ground = bake_at(field, e, world[:, 0], world[:, 1])
        gap = world[:, 2] - ground
        assert np.abs(gap).max() <= GRADE * cell + 0.005, (e, gap)


def border_distance(p: np.ndarray, loops: list[np.ndarray]) -> float:
    """Plan-view distance from ``p`` to the nearest segment of the closed border loops."""
    best = np.inf
    for loop in loops:
        a, b = loop, np.roll(loop, -1, axis=0)
        ab = b - a
        t = np.clip(((p - a) * ab).sum(1) / np.maximum((ab * ab).sum(1), 1e-12), 0.0, 1.0)
        best = min(best, float(np.linalg.norm(a + t[:, None] * ab - p, axis=1).min()))
    return best


@needs_newton
def test_in_out_verdict_matches_the_band_collision_away_from_the_border(scene, capsys):
    """Probe boxes across the road (up to a road width beside it), level with the centerline
    and 2 cm into it: Newton's penetrating contacts with the height field (road, or the ditch
    0.3 below) and the band collision's oob agree for every pose whose centre lies farther
    than the margin (the probe's reach plus the bake's and the grid's cell) from every border
    segment; the disagreement inside the margin is reported."""
    course, shapes, field = scene.course, scene.shapes, scene.course.heightfield.field
    t = course.result
    n_max, hw = t.N_max, 0.5
    center = t.center.numpy().reshape(E, n_max, 3)
    normal = t.normal.numpy().reshape(E, n_max, 3)
    borders = [t.inner.numpy().reshape(E, n_max, 3), t.outer.numpy().reshape(E, n_max, 3)]
    count = t.count.numpy()
    cell = float(field.frame.numpy()[:, 2].max()) + shapes.cell
    margin = math.hypot(PROBE[0], PROBE[1]) + cell  # the probe's reach plus both grids' cell
    rng = np.random.default_rng(0)
    far = near = far_bad = near_bad = 0
    for _ in range(80):
        pos, yaw = np.zeros((E, 3)), np.zeros(E)
        for e in range(E):
            i = int(rng.integers(count[e]))
            c0, c1 = center[e, i], center[e, (i + 1) % count[e]]
            yaw[e] = math.atan2(c1[1] - c0[1], c1[0] - c0[0])
            offset = rng.uniform(-2.0 * hw, 2.0 * hw)
            pos[e] = c0 + offset * normal[e, i] + [0.0, 0.0, PROBE[2] - 0.02]
        scene.place(pos, yaw)
        scene.poses.update(scene.state0.body_q)
        oob = course.step().contacts.oob.numpy() != 0
        on_ground = scene.touching_ground()
        for e in range(E):
            agree = on_ground[e] == (not oob[e])
            loops = [b[e, : count[e], :2].astype(np.float64) for b in borders]
            if border_distance(pos[e, :2], loops) > margin:
                far += 1
                far_bad += not agree
            else:
                near += 1
                near_bad += not agree
    with capsys.disabled():
        print(
            f"\nin/out: {far} poses beyond the margin ({margin:.3f}), {far_bad} disagree; "
            f"{near} inside it, {near_bad} disagree ({100 * near_bad / max(near, 1):.0f}%)"
        )
    assert far >= 64 and far_bad == 0


@wp.kernel
def _cast_down(
    # inputs
    mesh: wp.array(dtype=wp.uint64),
    xy: wp.array(dtype=wp.vec2f),
    # outputs
    z_out: wp.array(dtype=wp.float32),
):
    e = wp.tid()
    p = xy[e]
    q = wp.mesh_query_ray(mesh[e], wp.vec3f(p[0], p[1], 100.0), wp.vec3f(0.0, 0.0, -1.0), 1.0e4)
    z_out[e] = wp.where(q.result, 100.0 - q.t, wp.nan)


def mesh_tops(scene) -> list[np.ndarray]:
    """Per env: the z of its height-field mesh's top vertices as a [row, col] grid."""
    R = scene.shapes.resolution
    out = []
    for e in range(E):
        sid = scene.shapes.shapes(e)["heightfield"]
        mesh_id = int(scene.model.shape_source_ptr.numpy()[sid])
        mesh = next(m for m in scene.model.heightfield_meshes if int(m.id) == mesh_id)
        out.append(mesh.points.numpy()[: R * R, 2].reshape(R, R).T.copy())  # vertex col*R+row
    return out


@needs_newton
def test_refreshed_meshes_follow_the_grid(scene):
    """With meshes=True every world has its own height-field mesh; a write leaves it alone,
    refresh_meshes([e]) rewrites world e's from its grid (vertex z, a ray cast straight down)
    and leaves the others' bitwise unchanged."""
    shapes, m = scene.shapes, scene.model
    R, span = shapes.resolution, shapes.z_hi - shapes.z_lo
    ids = [int(m.shape_source_ptr.numpy()[shapes.shapes(e)["heightfield"]]) for e in range(E)]
    assert len(set(ids)) == E

    def grid(e):
        start, n = scene.block(e)
        block = m.heightfield_elevations.numpy()[start : start + n]
        return shapes.z_lo + block.reshape(R, R).astype(np.float64) * span

    shapes.refresh_meshes()  # every mesh up to date (earlier tests wrote without a refresh)
    mask = wp.array([0, 1, 0, 0], dtype=wp.int32, device="cpu")
    scene.course.regenerate(mask=mask, advance=True)
    shapes.write(mask)
    before = mesh_tops(scene)
    assert not np.allclose(before[1], grid(1), atol=1e-5)  # the write leaves the meshes alone
    shapes.refresh_meshes([1])
    after = mesh_tops(scene)
    for e in range(E):
        np.testing.assert_allclose(after[e], grid(e), atol=1e-5)
        if e != 1:
            assert after[e].tobytes() == before[e].tobytes()
    # a ray straight down through vertex (row, col) = (R // 2, R // 3), in the shape's frame
    H = shapes.half_extent
    xy = np.array([[-H + (R // 3) * shapes.cell, -H + (R // 2) * shapes.cell]] * E, np.float32)
    z = wp.zeros(E, dtype=wp.float32, device="cpu")
    wp.launch(
        _cast_down,
        E,
        inputs=[wp.array(np.array(ids, np.uint64), dtype=wp.uint64, device="cpu")]
        + [wp.array(xy, dtype=wp.vec2f, device="cpu")],
        outputs=[z],
        device="cpu",
    )
    want = [grid(e)[R // 2, R // 3] for e in range(E)]
    np.testing.assert_allclose(z.numpy(), want, atol=1e-4)


# ------------------------------------------------------------------ refusals
@needs_newton
def test_building_refusals(course):
    shapes = NewtonCourse(course)
    builder = newton.ModelBuilder()
    with pytest.raises(TypeError, match="newton.ModelBuilder"):
        shapes.add_world("builder", 0)
    with pytest.raises(ValueError, match="not inside a world"):
        shapes.add_world(builder, 0)
    builder.begin_world()
    with pytest.raises(ValueError, match="env"):
        shapes.add_world(builder, E)
    with pytest.raises(TypeError, match="env"):
        shapes.add_world(builder, 1.0)
    with pytest.raises(TypeError, match="ShapeConfig"):
        shapes.add_world(builder, 0, cfg={"mu": 1.0})
    with pytest.raises(ValueError, match="add_world"):
        shapes.shapes(0)
    count = builder.shape_count
    shapes.add_world(builder, 0)
    assert builder.shape_count == count + 1 + 24 + 48
    with pytest.raises(ValueError, match="added already"):
        shapes.add_world(builder, 0)
    builder.end_world()
    with pytest.raises(RuntimeError, match="attach"):
        shapes.write()
    with pytest.raises(RuntimeError, match="meshes=False"):
        shapes.refresh_meshes()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Heightfield-vs-heightfield")
        model = builder.finalize(device="cpu")
    with pytest.raises(TypeError, match="newton.Model"):
        shapes.attach(builder)
    with pytest.raises(ValueError, match=r"envs \[1, 2, 3\] were never added"):
        shapes.attach(model)
    assert shapes.model is None


@needs_newton
def test_write_and_pose_refusals(scene):
    with pytest.raises(TypeError, match="mask"):
        scene.shapes.write(np.ones(E, np.int32))
    with pytest.raises(ValueError, match="mask"):
        scene.shapes.write(wp.ones(E + 1, dtype=wp.int32, device="cpu"))
    with pytest.raises(TypeError, match="dtype"):
        scene.shapes.write(wp.ones(E, dtype=wp.float32, device="cpu"))
    with pytest.raises(RuntimeError, match="attached already"):
        scene.shapes.attach(scene.model)
    with pytest.raises(ValueError, match="env indices"):
        scene.shapes.refresh_meshes([E])
    with pytest.raises(TypeError, match="envs"):
        scene.shapes.refresh_meshes([0.5])
    with pytest.raises(TypeError, match="bodies"):
        BodyPoses("0123")
    with pytest.raises(ValueError, match="body index >= 0"):
        BodyPoses([0, -1])
    poses = BodyPoses(scene.probe, "cpu")
    with pytest.raises(TypeError, match="body_q"):
        poses.update(np.zeros((8, 7), np.float32))
    with pytest.raises(ValueError, match="bodies"):
        poses.update(wp.zeros(2, dtype=wp.transformf, device="cpu"))
    with pytest.raises(TypeError, match="dtype"):
        poses.update(wp.zeros(64, dtype=wp.vec3f, device="cpu"))
    poses.update(scene.state0.body_q)
    bq = scene.state0.body_q.numpy()[scene.probe]
    np.testing.assert_array_equal(poses.position.numpy(), bq[:, :3])
    np.testing.assert_array_equal(poses.orientation.numpy(), bq[:, 3:])
