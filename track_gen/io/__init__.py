"""track_gen.io: real circuits in, courses out.

Import: :func:`read_tum` reads a circuit of the TUM racetrack database (centerline and
per-point left/right widths) into a :class:`RealTrack`; :func:`tracks_spec` turns real
circuits into a pipeline (a ``PipelineSpec`` for ``TrackGenerator`` / ``Course.track``).
:func:`read_waypoint_path` reads a drone waypoint path (start, waypoints, end; the JSON of the
published minimum-time benchmarks) into a :class:`WaypointPath`; :func:`path_gates` gives its
gates, :func:`gates_spec` a gate pipeline (``GateGenerator`` / ``Course.gates``) and
:func:`waypoint_arrays` the arrays of a ``tools.MinTimeUtility``.

Export, one env of a batch: :func:`write_tum` (the same CSV layout), :func:`write_cones`
(a Formula Student Driverless Simulator cone map), :func:`write_gltf` / :func:`write_usd`
(triangle meshes of the road band and its border walls; gate poses as USD Xforms).

Export, a whole batch: :func:`write_npz` / :func:`write_json` (every result array, and with
``generator=`` what rebuilds it), :func:`read_batch`, :func:`rebuild`.

The mesh writers import ``trimesh`` / ``usd-core`` when called (extras ``[mesh]`` and
``[usd]``). Every writer checks its arguments and refuses an invalid env before anything is
written, and writes through a temporary file (no partial file on failure).
"""

from .batch import BatchFile, read_batch, rebuild, write_json, write_npz
from .cones import CONE_COLUMNS, CONE_TAGS, DEFAULT_CONE_SPACING, write_cones
from .mesh import GLTF_FROM_TRACK, road_mesh, write_gltf, write_usd
from .spec import UNITS, tracks_spec
from .tum import TUM_COLUMNS, TUM_HEADER, RealTrack, plot_real_tracks, read_tum, write_tum
from .waypoints import WaypointPath, gates_spec, path_gates, read_waypoint_path, waypoint_arrays

__all__ = [
    "CONE_COLUMNS",
    "CONE_TAGS",
    "DEFAULT_CONE_SPACING",
    "GLTF_FROM_TRACK",
    "TUM_COLUMNS",
    "TUM_HEADER",
    "UNITS",
    "BatchFile",
    "RealTrack",
    "WaypointPath",
    "gates_spec",
    "path_gates",
    "plot_real_tracks",
    "read_batch",
    "read_tum",
    "read_waypoint_path",
    "rebuild",
    "road_mesh",
    "tracks_spec",
    "waypoint_arrays",
    "write_cones",
    "write_gltf",
    "write_json",
    "write_npz",
    "write_tum",
    "write_usd",
]
