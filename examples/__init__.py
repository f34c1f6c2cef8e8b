"""The runnable examples (``python examples/<name>.py``; tests/test_examples.py runs each).

A package too, so that code beside them imports an example's pieces by name from the
repository root: the studies import the PPO recipe as ``examples.train_ppo``, the tests and
``benchmarks/cuda_check.py`` the on-device car env as ``examples.warp_env``."""
