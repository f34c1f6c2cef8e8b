"""The Newton shapes of a track course and their in-place refresh: :class:`NewtonCourse`."""

from __future__ import annotations

import math
import warnings

import numpy as np
import warp as wp

from ...core.budget import AllocationBudget
from ...core.checks import check_int, host_values
from ...core.exec import require_not_capturing
from ...course import Course
from ...tools import GridResolutionWarning, HeightFieldBake, PropKind, Props, check_grid_resolution
from ...tools.shared import mask_or
from .fields import GRID_SLACK, HALF_EXTENT, MESHES, PARK_DEPTH, RESOLUTION, Z_HI, Z_LO
from .kernels import _clip_kernel, _grid_kernel, _heights_kernel, _mesh_kernel, _props_kernel

#: What to install when newton is missing.
INSTALL_HINT = "pip install 'track_gen[newton]' (newton 1.8)"


def require_newton():
    """The ``newton`` module, imported now (``track_gen`` never imports it on its own); an
    ImportError naming the extra to install when it is missing."""
    try:
        import newton  # noqa: PLC0415 (an optional dependency: imported when first needed)
    except ImportError as err:
        raise ImportError(f"track_gen.interop.newton needs Newton: {INSTALL_HINT}") from err
    return newton


class _PropGroup:
    """One ``tools.Props`` component of the course and its Newton shapes (host records)."""

    def __init__(self, name: str, comp: Props):
        self.name = name
        self.result = comp.result  # PropsResult, live
        self.kind = int(PropKind.WALL) if comp.kind == "wall" else int(PropKind.CONE)
        self.slots = comp.result.max_props
        self.sizes = dict(comp.sizes)
        self.spacing = float(comp.spacing)
        self.shapes: dict[int, list[int]] = {}  # env -> its slots' shape ids
        self.shape_ids: wp.array | None = None  # int32 [E*slots], at attach


class NewtonCourse:
    """The Newton shapes a track course needs, one set per world, built once, and the kernels
    that write a masked regeneration into them in place.

    Per env (one Newton world each): a static height field on a fixed grid of
    ``resolution x resolution`` vertices, ``2 * half_extent`` track units across, holding
    heights in ``[z_lo, z_hi]``, resampled from the course's ``tools.HeightFieldBake`` and
    centred on the env's bake square; and, for each ``tools.Props`` component of the course,
    ``max_props`` static shapes (a cone for a cone prop, a box for a wall piece), the slots
    past the env's prop count parked ``park_depth`` below ``z_lo``.

    Args:
        course: a track :class:`~track_gen.course.Course` with a ``HeightFieldBake``
            component (``"heightfield"``); its ``Props`` components (any names) become props.
        resolution: grid vertices per side (``RESOLUTION``; None: cells no larger than the
            bake's on the largest predicted course).
        half_extent: half the grid's side, track units (``HALF_EXTENT``; None: ``GRID_SLACK``
            times half the largest bake square, predicted or of the first batch).
        z_lo: lowest height of the grids, track units (``Z_LO``; None: from the generator's
            elevation fields, the bake's fill and the first batch).
        z_hi: highest height (``Z_HI``; None: likewise). ``z_hi >= z_lo``; equal for a flat
            course.
        park_depth: how far below ``z_lo`` unused props wait, track units (``PARK_DEPTH``;
            None: ``2 * half_extent``).
        meshes: give each world its own copy of the triangle mesh Newton builds from a height
            field at finalize (what its ray casts read) and let :meth:`refresh_meshes` rewrite
            it (``MESHES``; False: one flat mesh shared by every world, never updated).

    The recipe: ``add_world(builder, e)`` inside each ``builder.begin_world()`` block,
    ``builder.finalize()``, :meth:`attach` the model (it writes every env), then
    :meth:`write` with the mask of every masked regeneration, right after it. A write
    launches three kernels (plus one per props component), allocates nothing and never
    synchronizes: it can be recorded in a graph with the regeneration.

    Attributes (read-only): ``course``, ``resolution``, ``half_extent``, ``cell`` (grid
    spacing, track units), ``z_lo``, ``z_hi``, ``park_z`` (height of a parked prop's
    centre), ``model`` (None before :meth:`attach`), ``clipped`` (int32 ``[E]``: 1 when the
    env's last write lost part of its road: an on-road bake texel outside the grid's square
    or its height outside ``[z_lo, z_hi]``, clamped), ``prop_groups`` (names of the props
    components), :meth:`shapes` (the shape ids of an env).
    """

    def __init__(
        self,
        course: Course,
        *,
        resolution: int | None = None,
        half_extent: float | None = None,
        z_lo: float | None = None,
        z_hi: float | None = None,
        park_depth: float | None = None,
        meshes: bool = False,
    ):
        if not isinstance(course, Course):
            raise TypeError(
                f"NewtonCourse(course): course must be a track_gen.course.Course, got "
                f"{type(course).__name__}"
            )
        bake = course.components.get("heightfield")
        if not isinstance(bake, HeightFieldBake):
            raise ValueError(
                "NewtonCourse(course): the course has no HeightFieldBake component "
                "('heightfield'): add tools.HeightFieldBake(resolution=...) to its components "
                "(Course.track(..., extra=(HeightFieldBake(64),)))"
            )
        resolution = RESOLUTION.check(resolution, "NewtonCourse resolution")
        half_extent = HALF_EXTENT.check(half_extent, "NewtonCourse half_extent")
        z_lo = Z_LO.check(z_lo, "NewtonCourse z_lo")
        z_hi = Z_HI.check(z_hi, "NewtonCourse z_hi")
        park_depth = PARK_DEPTH.check(park_depth, "NewtonCourse park_depth")
        self.meshes = MESHES.check(meshes, "NewtonCourse meshes")
        self.course = course
        self.device = course.device
        require_not_capturing(self.device, "NewtonCourse construction")
        self.num_envs = E = course.generator.layout.num_envs
        self._bake = bake
        self._field = bake.result  # HeightFieldResult, live
        self._bake_res = int(bake.resolution)

        side = self._largest_bake_side()
        if half_extent is None:
            half_extent = 0.5 * GRID_SLACK * side
        if resolution is None:
            cell = side / self._bake_res
            resolution = min(max(int(math.ceil(2.0 * half_extent / cell)) + 1, 2), RESOLUTION.hi)
        lo, hi = self._height_range()
        z_lo = lo if z_lo is None else z_lo
        z_hi = hi if z_hi is None else z_hi
        if z_hi < z_lo:
            raise ValueError(
                f"NewtonCourse z_hi = {z_hi} is below z_lo = {z_lo}: pass z_hi >= z_lo (track "
                "units; equal for a flat course)"
            )
        self.resolution = int(resolution)
        self.half_extent = float(half_extent)
        self.cell = 2.0 * self.half_extent / (self.resolution - 1)
        self.z_lo, self.z_hi = float(z_lo), float(z_hi)
        depth = 2.0 * self.half_extent if park_depth is None else float(park_depth)
        self.park_z = self.z_lo - depth

        self._groups = [
            _PropGroup(name, comp)
            for name, comp in course.components.items()
            if isinstance(comp, Props)
        ]
        budget = AllocationBudget(self.device, "lower num_envs", owner="this NewtonCourse's")
        self._all = budget.full(E, 1, wp.int32, "all-envs mask")
        self.clipped = budget.zeros(E, wp.int32, "clipped flags")
        self._budget = budget
        self._hfield: dict[int, int] = {}  # env -> height-field shape id
        self._world: dict[int, int] = {}  # env -> Newton world
        self.model = None
        self._hfield_shape: wp.array | None = None
        self._offset: wp.array | None = None
        self._meshes: list = []  # env -> its wp.Mesh (meshes=True, after attach)
        self._mesh_ids: wp.array | None = None
        self._mesh_mask: wp.array | None = None

    # ------------------------------------------------------------------ construction helpers
    def _largest_bake_side(self) -> float:
        """The largest bake square side, track units: the generator's prediction
        (``check_grid_resolution``; its warning is the bake's to give) or the first batch's,
        whichever is larger."""
        side = 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GridResolutionWarning)
            cell = check_grid_resolution(
                "NewtonCourse",
                self.course.generator,
                self._bake_res,
                size_hi=self._bake.size_hi,
                margin=self._bake.margin,
            )
        if cell is not None:
            side = float(cell) * self._bake_res
        frame = self._field.frame.numpy()
        ok = np.isfinite(frame).all(axis=1) & (frame[:, 2] > 0)
        if ok.any():
            side = max(side, float(frame[ok, 2].max()) * self._bake_res)
        if not side > 0.0:
            raise ValueError(
                "NewtonCourse: no valid env in the course's first batch and no size the "
                "generator declares: pass half_extent= (track units) and resolution="
            )
        return side

    def _height_range(self) -> tuple[float, float]:
        """``(lo, hi)``: the heights the generator can draw (its elevation fields and their
        randomizers; 0 for a flat track), the bake's fill when set, and the first batch's
        finite bake heights."""
        values: list[float] = []
        spec = getattr(self.course.generator, "spec", None)
        config = getattr(spec, "config", None)
        profile = getattr(config, "z_profile", None)
        if profile == "flat":
            values.append(0.0)
        elif profile is not None:
            values += [float(config.z_min), float(config.z_max)]
            randomize = dict(getattr(spec, "randomize", ()))
            for name in ("elevate.z_min", "elevate.z_max"):
                if name in randomize:
                    values += [float(v) for v in randomize[name]]
        if self._bake.fill is not None:
            values.append(float(self._bake.fill))
        h = self._field.height.numpy()
        h = h[np.isfinite(h)]
        if h.size:
            values += [float(h.min()), float(h.max())]
        if not values:
            values = [0.0]
        return min(values), max(values)

    # ------------------------------------------------------------------ building
    @property
    def prop_groups(self) -> tuple[str, ...]:
        """Names of the course's ``Props`` components, in course order."""
        return tuple(g.name for g in self._groups)

    def shapes(self, env: int) -> dict[str, int | list[int]]:
        """The Newton shape ids of env ``env``: ``{"heightfield": id, <props name>: [ids of
        its slots]}`` (after :meth:`add_world`)."""
        env = check_int("env", env, 0, self.num_envs - 1)
        if env not in self._hfield:
            raise ValueError(
                f"NewtonCourse.shapes(env={env}): call add_world(builder, {env}) first"
            )
        out: dict[str, int | list[int]] = {"heightfield": self._hfield[env]}
        for g in self._groups:
            out[g.name] = list(g.shapes[env])
        return out

    def add_world(self, builder, env: int, *, cfg=None) -> dict[str, int | list[int]]:
        """Add env ``env``'s shapes to ``builder``'s current world (inside
        ``builder.begin_world()``): its height field and its props' slots, static, parked
        until :meth:`attach` writes them. ``cfg``: the ``newton.ModelBuilder.ShapeConfig``
        of every shape (friction, contact stiffness, ...); None is the builder's default.
        Returns :meth:`shapes` of the env."""
        newton = require_newton()
        if not isinstance(builder, newton.ModelBuilder):
            raise TypeError(
                f"NewtonCourse.add_world(builder): builder must be a newton.ModelBuilder, got "
                f"{type(builder).__name__}"
            )
        env = check_int("env", env, 0, self.num_envs - 1)
        if self.model is not None:
            raise RuntimeError(
                "NewtonCourse.add_world: this NewtonCourse is attached to a model already; "
                "build a new NewtonCourse for another model"
            )
        if env in self._hfield:
            raise ValueError(f"NewtonCourse.add_world: env {env} was added already")
        world = int(builder.current_world)
        if world < 0:
            raise ValueError(
                "NewtonCourse.add_world: the builder is not inside a world (current_world = "
                f"{world}); call builder.begin_world() first: a global shape would meet every "
                "world's bodies"
            )
        if cfg is not None and not isinstance(cfg, newton.ModelBuilder.ShapeConfig):
            raise TypeError(
                f"NewtonCourse.add_world(cfg): cfg must be a newton.ModelBuilder.ShapeConfig or "
                f"None, got {type(cfg).__name__}"
            )
        R, H = self.resolution, self.half_extent
        data = np.zeros((R, R), np.float32)
        if self.meshes:
            # Newton shares one finalized mesh between height fields of equal content: three
            # marker vertices make each env's grid its own (attach's write overwrites them)
            data[0, :3] = (0.0, 1.0, (env + 1.0) / (self.num_envs + 1.0))
        hf = newton.Heightfield(
            data=data,
            nrow=R,
            ncol=R,
            hx=H,
            hy=H,
            min_z=self.z_lo,
            max_z=self.z_hi,
        )
        kw = {} if cfg is None else {"cfg": cfg}
        self._hfield[env] = builder.add_shape_heightfield(
            heightfield=hf, label=f"track_gen/{env}/heightfield", **kw
        )
        park = wp.transform(wp.vec3(0.0, 0.0, self.park_z), wp.quat_identity())
        for g in self._groups:
            ids = []
            for k in range(g.slots):
                label = f"track_gen/{env}/{g.name}/{k}"
                if g.kind == int(PropKind.WALL):
                    sid = builder.add_shape_box(
                        -1,
                        xform=park,
                        hx=0.5 * g.spacing,
                        hy=0.5 * g.sizes["wall_thickness"],
                        hz=0.5 * g.sizes["wall_height"],
                        label=label,
                        **kw,
                    )
                else:
                    sid = builder.add_shape_cone(
                        -1,
                        xform=park,
                        radius=0.5 * g.sizes["cone_diameter"],
                        half_height=0.5 * g.sizes["cone_height"],
                        label=label,
                        **kw,
                    )
                ids.append(int(sid))
            g.shapes[env] = ids
        self._world[env] = world
        return self.shapes(env)

    def attach(self, model) -> None:
        """Bind the finalized ``model`` (built from the builder :meth:`add_world` filled for
        every env, on the course's device) and write every env into it.

        Checks the shapes (type, world, static, the height field's grid and range) and reads
        each height field's block of ``model.heightfield_elevations`` once (host reads: at
        construction only). Raises before anything is written."""
        newton = require_newton()
        if not isinstance(model, newton.Model):
            raise TypeError(
                f"NewtonCourse.attach(model): model must be a newton.Model, got "
                f"{type(model).__name__}"
            )
        if self.model is not None:
            raise RuntimeError("NewtonCourse.attach: attached already (one model per NewtonCourse)")
        if wp.get_device(model.device) != self.device:
            raise ValueError(
                f"NewtonCourse.attach: the model is on {model.device}, the course on "
                f"{self.device}: finalize the builder with device={self.device!s}"
            )
        require_not_capturing(self.device, "NewtonCourse.attach")
        missing = [e for e in range(self.num_envs) if e not in self._hfield]
        if missing:
            raise ValueError(
                f"NewtonCourse.attach: envs {missing[:8]} were never added: call "
                "add_world(builder, e) for every env before builder.finalize()"
            )
        types = model.shape_type.numpy()
        worlds = model.shape_world.numpy()
        bodies = model.shape_body.numpy()
        hindex = model.shape_heightfield_index.numpy()
        hdata = model.heightfield_data.numpy()
        n = int(model.shape_count)
        expect = [(self._hfield, int(newton.GeoType.HFIELD), "heightfield")]
        for g in self._groups:
            geo = newton.GeoType.BOX if g.kind == int(PropKind.WALL) else newton.GeoType.CONE
            expect.append((g.shapes, int(geo), g.name))
        for table, geo, what in expect:
            for env, sids in table.items():
                for sid in np.atleast_1d(sids):
                    sid = int(sid)
                    if not (
                        0 <= sid < n
                        and int(types[sid]) == geo
                        and int(worlds[sid]) == self._world[env]
                        and int(bodies[sid]) == -1
                    ):
                        raise ValueError(
                            f"NewtonCourse.attach: shape {sid} ({what} of env {env}) is not "
                            "the static shape add_world added in that world: finalize the "
                            "builder add_world filled, without collapsing or removing shapes"
                        )
        offsets = np.zeros(self.num_envs, np.int32)
        R, H = self.resolution, self.half_extent
        for env, sid in self._hfield.items():
            h = hdata[int(hindex[sid])]
            grid = (int(h["nrow"]), int(h["ncol"]), float(h["hx"]), float(h["hy"]))
            zr = (float(h["min_z"]), float(h["max_z"]))
            if grid != (R, R, np.float32(H), np.float32(H)) or zr != (
                np.float32(self.z_lo),
                np.float32(self.z_hi),
            ):
                raise ValueError(
                    f"NewtonCourse.attach: the height field of env {env} is {grid}, z {zr}; "
                    f"expected {(R, R, H, H)}, z {(self.z_lo, self.z_hi)} (a scaled shape?): "
                    "add it with add_world and leave its scale at 1"
                )
            offsets[env] = int(h["data_offset"])
        budget = self._budget
        E = self.num_envs
        self._hfield_shape = budget.array(
            np.array([self._hfield[e] for e in range(E)], np.int32), wp.int32, "shape ids"
        )
        self._offset = budget.array(offsets, wp.int32, "elevation offsets")
        for g in self._groups:
            ids = np.array([g.shapes[e] for e in range(E)], np.int32).reshape(-1)
            g.shape_ids = budget.array(ids, wp.int32, f"{g.name} shape ids")
        if self.meshes:
            self._attach_meshes(model, budget)
        self.model = model
        self.write()
        if self.meshes:
            self.refresh_meshes()

    def _attach_meshes(self, model, budget) -> None:
        """Find each env's own height-field mesh (``model.heightfield_meshes``, through the
        shape's ``shape_source_ptr``) and allocate the ids and the refresh mask."""
        E = self.num_envs
        ptrs = model.shape_source_ptr.numpy()
        ids = [int(ptrs[self._hfield[e]]) for e in range(E)]
        by_id = {int(m.id): m for m in getattr(model, "heightfield_meshes", ())}
        if len(set(ids)) != E or any(i not in by_id for i in ids):
            raise ValueError(
                "NewtonCourse.attach: the worlds' height fields do not each have their own mesh "
                "in model.heightfield_meshes (a Newton version that builds them otherwise?): "
                "build the NewtonCourse with meshes=False"
            )
        self._meshes = [by_id[i] for i in ids]
        self._mesh_ids = budget.array(np.array(ids, np.uint64), wp.uint64, "mesh ids")
        self._mesh_mask = budget.zeros(E, wp.int32, "mesh refresh mask")

    def refresh_meshes(self, envs=None) -> None:
        """Rewrite the height-field meshes of ``envs`` (env indices, host ints; None: every env)
        from their grids and refit them: what Newton's ray casts (its ray-cast and camera
        sensors, picking) and the solvers that read meshes see. Needs ``meshes=True``.

        Eager and host-driven: one launch, then one ``wp.Mesh.refit()`` per env on the host.
        Call it after :meth:`write` for the envs you regenerated (you know them on the host), or
        for every env now and then; :meth:`write` itself never touches the meshes."""
        if not self.meshes:
            raise RuntimeError(
                "NewtonCourse.refresh_meshes: built with meshes=False (the worlds share one "
                "flat mesh): pass meshes=True to NewtonCourse to give each world its own"
            )
        if self.model is None:
            raise RuntimeError("NewtonCourse.refresh_meshes: call attach(model) first")
        E = self.num_envs
        if envs is None:
            chosen = np.arange(E)
        else:
            chosen = host_values("envs", envs, "int")
            if chosen.size and (chosen.min() < 0 or chosen.max() >= E):
                raise ValueError(
                    f"NewtonCourse.refresh_meshes: envs must be env indices in [0, {E - 1}], got "
                    f"{chosen.tolist()[:8]}"
                )
            chosen = np.unique(chosen.astype(np.int64))
        require_not_capturing(self.device, "NewtonCourse.refresh_meshes")
        mask = np.zeros(E, np.int32)
        mask[chosen] = 1
        self._mesh_mask.assign(mask)
        wp.launch(
            _mesh_kernel,
            (E, self.resolution),
            inputs=[
                self._mesh_mask,
                self._mesh_ids,
                self._offset,
                self.model.heightfield_elevations,
            ]
            + [self.resolution, self.z_lo, self.z_hi],
            device=self.device,
        )
        for e in chosen:
            self._meshes[int(e)].refit()

    # ------------------------------------------------------------------ the hot path
    def write(self, mask: wp.array | None = None, *, stream=None) -> None:
        """Write the envs with ``mask[e] != 0`` (None: every env) into the model, from the
        course's current bake and props: call it right after ``course.regenerate(mask=...)``
        with the same mask.

        Per masked env: the height field's transform (centred on the bake square) and its
        block of ``model.heightfield_elevations``; each prop slot's ``shape_transform`` (a
        wall's ``shape_scale`` and ``shape_collision_radius`` too), the unused slots parked;
        ``clipped[e]``. Unmasked envs' data stays bitwise unchanged. No allocation, no host
        synchronization, launches only (recordable; ``stream``: where to launch)."""
        if self.model is None:
            raise RuntimeError("NewtonCourse.write: call attach(model) first")
        mask = mask_or(mask, self._all, self.num_envs, self.device)
        m, f, E, dev = self.model, self._field, self.num_envs, self.device
        res, R, H = self._bake_res, self.resolution, self.half_extent
        wp.launch(
            _grid_kernel,
            E,
            inputs=[mask, f.frame, self._hfield_shape, res],
            outputs=[m.shape_transform, self.clipped],
            device=dev,
            stream=stream,
        )
        wp.launch(
            _heights_kernel,
            (E, R),
            inputs=[mask, f.height, f.frame, self._offset, res, R, H, self.z_lo, self.z_hi],
            outputs=[m.heightfield_elevations],
            device=dev,
            stream=stream,
        )
        wp.launch(
            _clip_kernel,
            (E, res),
            inputs=[mask, f.height, f.on_road, f.frame, res, H, self.z_lo, self.z_hi],
            outputs=[self.clipped],
            device=dev,
            stream=stream,
        )
        for g in self._groups:
            p = g.result
            wp.launch(
                _props_kernel,
                (E, g.slots),
                inputs=[mask, p.position, p.orientation, p.scale, p.count, f.frame, g.shape_ids]
                + [res, g.slots, g.kind, self.park_z],
                outputs=[m.shape_transform, m.shape_scale, m.shape_collision_radius],
                device=dev,
                stream=stream,
            )

    def __repr__(self) -> str:
        return (
            f"NewtonCourse(E={self.num_envs}, grid {self.resolution}x{self.resolution} over "
            f"{2 * self.half_extent:g} track units, z [{self.z_lo:g}, {self.z_hi:g}], props "
            f"{list(self.prop_groups)}, attached={self.model is not None})"
        )
