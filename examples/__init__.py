"""The runnable examples (``python examples/<name>.py``; tests/test_examples.py runs each).

A package too, so that code beside them imports an example's pieces by name from the
repository root: the studies and the tests import the PPO recipe as ``examples.train_ppo``,
docs/writing-a-sensor.md the example sensor as ``examples.sensor_start_gap``."""
