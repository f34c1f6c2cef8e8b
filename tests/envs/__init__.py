"""Tests of track_gen.envs (the racing env and its gymnasium / rsl_rl adapters)."""
