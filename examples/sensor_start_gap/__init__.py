"""``acme.start_gap``: a sensor of your own and its observation term, in one folder.

The sensor answers, per env and step, where the start line of the agent's course lies in the
agent's frame (x forward, y left, track units). Its observation term writes two columns, x
and y divided by ``max_range`` and clamped to [-1, 1], 0 where the env is not usable.

* ``fields.py``: the one setting, declared once (a Tunable), and the settings class;
* ``component.py``: the course component (inputs, allocation in ``attach``, the answer in
  ``step``) and its result;
* ``term.py``: the observation term: its columns, their bounds and a ``@wp.func`` writer.

An env observes it after ONE registration line: ``tools.register_term(StartGapTerm())``
(``examples/custom_sensor.py``; docs/writing-a-sensor.md walks through it).
"""

from .component import StartGap, StartGapResult
from .fields import MAX_RANGE, StartGapSettings
from .term import StartGapTerm

__all__ = ["MAX_RANGE", "StartGap", "StartGapResult", "StartGapSettings", "StartGapTerm"]
