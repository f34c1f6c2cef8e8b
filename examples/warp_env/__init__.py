"""A batched car-racing environment on a track_gen course, stepped and auto-reset on device.

``from examples.warp_env import CarRaceEnv`` from the repository root (the tests,
``benchmarks/cuda_check.py``), or ``from warp_env import CarRaceEnv`` in a script beside it
(``python examples/warp_env_demo.py``: a script's folder is on ``sys.path``). See
``README.md`` beside this file.
"""

from .car_env import CarRaceEnv, EnvStep
from .kernels import OBS_DIM, DoneBit, follow_line

__all__ = ["OBS_DIM", "CarRaceEnv", "DoneBit", "EnvStep", "follow_line"]
