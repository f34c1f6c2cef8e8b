"""Studies: measured questions about training on track_gen courses (what a policy learns, how it
generalizes), as opposed to the speed runs of ``benchmarks/``.

Run one from the repository root as a module, e.g. ``python -m studies.curriculum --smoke``:
the repository root is then on ``sys.path``, so a study imports ``track_gen``, the PPO recipe of
``examples/train_ppo.py`` (``examples.train_ppo``) and its sibling studies as packages.

* :mod:`studies.generalization`: one fixed course vs a course regenerated per episode.
* :mod:`studies.curriculum`: domain randomisation vs prioritized level replay vs learnability.
"""
