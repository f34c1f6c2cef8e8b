"""Shared fixtures: every test runs on cpu, and on cuda when a CUDA device is present."""

from __future__ import annotations

import os

import warp as wp
from hypothesis import settings

wp.config.log_level = wp.LOG_WARNING  # no banner or module-load lines
wp.init()

DEVICES = ["cpu"] + (["cuda:0"] if wp.get_cuda_device_count() > 0 else [])


def pytest_generate_tests(metafunc):
    if "device" in metafunc.fixturenames:
        metafunc.parametrize("device", DEVICES)


def pytest_collection_modifyitems(config, items):
    """The tests marked ``newton`` (they build a Newton model) first, in their order: pytest-xdist
    (``-n``) hands each worker a first block of consecutive tests, so they all land on one worker
    and Newton's kernels compile once on a cold cache instead of on every worker at the same
    time (~100 s of one core each). Without ``-n`` the order is all it changes. (xdist's own
    ``--dist loadgroup`` does not group on pytest 9: it renames ``item._nodeid``, which pytest 9
    no longer reads.)"""
    items.sort(key=lambda item: item.get_closest_marker("newton") is None)


# Hypothesis: a fixed, derandomized example budget so the fuzz suite's run time is bounded
# (HYPOTHESIS_PROFILE=dev explores more, with random seeds).
settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True, print_blob=True)
settings.register_profile("dev", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
