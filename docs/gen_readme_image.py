"""Make docs/images/batch.png, the picture at the top of README.md (run from the repository
root: ``python docs/gen_readme_image.py``; needs matplotlib).

One batch of 16 envs on the CPU, each drawing its sampler from every built-in one
(``presets.track_mix(TRACK_GENERATORS)``, seeds 0..15: ``seeds=0``), drawn with
``track_gen.viz.plot_tracks``: the road band, its borders and the dashed centerline per env,
titled with its closed length (an invalid env would be red, titled with its fail bits).
"""

from __future__ import annotations

import sys

import warp as wp

sys.path.insert(0, ".")
wp.config.log_level = wp.LOG_WARNING

from track_gen import TRACK_GENERATORS, TrackGenerator  # noqa: E402
from track_gen.pipeline import presets  # noqa: E402
from track_gen.viz import plot_tracks  # noqa: E402

OUT = "docs/images/batch.png"
NUM_ENVS = 16


def main() -> int:
    spec = presets.track_mix(TRACK_GENERATORS, num_envs=NUM_ENVS, device="cpu")
    gen = TrackGenerator(spec, seeds=0)  # env e gets seed e
    fig = plot_tracks(gen.generate(), ncols=8, title=f"one batch: {NUM_ENVS} envs, one generate()")
    fig.set_size_inches(16, 4.6)
    fig.savefig(OUT, dpi=80, bbox_inches="tight")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
