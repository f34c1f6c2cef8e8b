"""Courses in the Newton physics engine (``pip install 'track_gen[newton]'``).

:class:`NewtonCourse` builds, once, the Newton shapes a track course needs in each of ``E``
worlds (a height field on a fixed grid, the props as static shapes) and writes a masked
regeneration into them in place: no model rebuild, no host synchronization, recordable.
:class:`BodyPoses` gathers one body per env (a car's chassis) from a Newton state into the
stable arrays a course binds::

    import newton
    from track_gen.interop.newton import BodyPoses, NewtonCourse

    shapes = NewtonCourse(course)  # a track course with a HeightFieldBake (and Props)
    builder = newton.ModelBuilder()
    for e in range(E):
        builder.begin_world()
        shapes.add_world(builder, e)
        chassis[e] = add_car(builder)  # your vehicle
        builder.end_world()
    model = builder.finalize(device=course.device)
    shapes.attach(model)  # writes every env
    poses = BodyPoses(chassis, course.device)
    course.bind(position=poses.position, orientation=poses.orientation, half_extents=he)
    ...
    poses.update(state.body_q)  # after each physics step
    res = course.step()
    course.regenerate(mask=done, advance=True)
    shapes.write(done)  # the regenerated worlds' heights and props, in place

Importing this package (or ``track_gen``) does not import newton; :class:`NewtonCourse`
imports it when a method needs it. See the Engines page of the docs (``docs/engines.md``).
"""

from .fields import GRID_SLACK
from .poses import BodyPoses
from .shapes import NewtonCourse, require_newton

__all__ = ["GRID_SLACK", "BodyPoses", "NewtonCourse", "require_newton"]
