"""Shared fixtures: every test runs on cpu, and on cuda when a CUDA device is present."""

from __future__ import annotations

import pytest
import warp as wp

wp.config.log_level = wp.LOG_WARNING  # no banner or module-load lines
wp.init()

DEVICES = ["cpu"] + (["cuda:0"] if wp.get_cuda_device_count() > 0 else [])


def pytest_generate_tests(metafunc):
    if "device" in metafunc.fixturenames:
        metafunc.parametrize("device", DEVICES)


def pytest_collection_modifyitems(config, items):
    if wp.get_cuda_device_count() == 0:
        skip = pytest.mark.skip(reason="no CUDA device")
        for item in items:
            if "cuda" in item.keywords:
                item.add_marker(skip)
