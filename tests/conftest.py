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


# Hypothesis: a fixed, derandomized example budget so the fuzz suite's run time is bounded
# (HYPOTHESIS_PROFILE=dev explores more, with random seeds).
settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True, print_blob=True)
settings.register_profile("dev", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
