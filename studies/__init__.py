"""Studies: scripts that measure what the library's courses are like and what training on them
gives, as opposed to the speed runs of ``benchmarks/``; not part of the installed package.

Run one from the repository root as a module, e.g. ``python -m studies.curriculum --smoke``:
the repository root is then on ``sys.path``, so a study imports ``track_gen``, the PPO recipe of
``examples/train_ppo.py`` (``examples.train_ppo``), the test suite's circuits (``tests.io``) and
its sibling studies as packages.

* :mod:`studies.realism`: generated courses beside real circuits (course descriptors).
* :mod:`studies.generalization`: one fixed course vs a course regenerated per episode.
* :mod:`studies.curriculum`: domain randomisation vs prioritized level replay vs learnability.
* :mod:`studies.full_scale`: the single-track car in metres trained on generated circuits (domain
  randomisation, learnability) or on real ones, evaluated on real circuits it never saw.
"""
