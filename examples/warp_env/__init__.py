"""A batched car-racing environment on a track_gen course, stepped and auto-reset on device.

``from warp_env import CarRaceEnv`` with ``examples/`` on ``sys.path`` (``python
examples/warp_env_demo.py`` puts it there). See ``README.md`` beside this file.
"""

from .car_env import CarRaceEnv, EnvStep
from .kernels import OBS_DIM, DoneBit, follow_line

__all__ = ["OBS_DIM", "CarRaceEnv", "DoneBit", "EnvStep", "follow_line"]
