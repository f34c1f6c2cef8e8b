"""Interoperation with other frameworks.

``track_gen.interop.torch`` records courses into a ``torch.cuda.graph``: ``registered()``
registers torch's capture with Warp (and, with ``conditional=True``, lets a masked regeneration
skip itself on device), and ``retain(graph, *objects)`` keeps objects alive as long as a graph.

``track_gen.interop.newton`` puts a course into the Newton physics engine: ``NewtonCourse``
builds each world's height field and props once and writes a masked regeneration into them in
place; ``BodyPoses`` gathers the engine's car poses for the course (extra ``[newton]``).

Importing this package (or ``track_gen``) imports neither torch nor newton;
``track_gen.interop.torch`` imports torch only when one of its functions is called, and
``track_gen.interop.newton`` imports newton only when a method needs it.
"""
