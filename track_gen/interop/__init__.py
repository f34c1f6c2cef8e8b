"""Interoperation with other frameworks.

``track_gen.interop.torch`` records courses into a ``torch.cuda.graph``: ``registered()``
registers torch's capture with Warp (and, with ``conditional=True``, lets a masked regeneration
skip itself on device), and ``retain(graph, *objects)`` keeps objects alive as long as a graph.

Importing this package (or ``track_gen``) does not import torch; ``track_gen.interop.torch``
imports it only when one of its functions is called.
"""
