"""The episode bookkeeping every batched env shares: why an episode ended
(:class:`RaceDone`), the curriculum signal modes, and the ``@wp.func`` that closes a step of
one env (step count, lap timing, the done flags, the running statistics, the curriculum
signal). An env's own kernel computes its progress and reward, then calls
:func:`close_step`."""

from __future__ import annotations

import enum

import warp as wp

__all__ = ["SIGNAL_LAP_TIME", "SIGNAL_NONE", "SIGNAL_SUCCESS", "RaceDone", "close_step"]

wp.set_module_options({"enable_backward": False})


class RaceDone(enum.IntFlag):
    """Why an episode ended (``env.done_reason[e]``; several bits may be set)."""

    OOB = 1  #: the agent left the course (off the road, or a crash): terminated
    LAPS = 2  #: ``max_laps`` laps completed (terminated)
    TIME_OUT = 4  #: ``max_episode_steps`` steps taken (truncated, alone)
    INVALID = 8  #: no usable course (``valid == 0``) or a non-finite agent state (terminated)


_OOB = wp.constant(int(RaceDone.OOB))
_LAPS = wp.constant(int(RaceDone.LAPS))
_TIME_OUT = wp.constant(int(RaceDone.TIME_OUT))
_INVALID = wp.constant(int(RaceDone.INVALID))

#: What an env writes into the curriculum signal (its ``signal_mode``): nothing, the
#: episode's success (``"learnability"``) or its last timed lap time (``"regret"``).
SIGNAL_NONE, SIGNAL_SUCCESS, SIGNAL_LAP_TIME = 0, 1, 2
_SIGNAL_SUCCESS = wp.constant(SIGNAL_SUCCESS)
_SIGNAL_LAP_TIME = wp.constant(SIGNAL_LAP_TIME)


@wp.func
def close_step(
    e: int,
    ok: bool,
    crashed: bool,
    lap_completed: bool,
    laps: int,
    prog: float,
    par: float,
    has_par: bool,
    dt: float,
    max_laps: int,
    max_episode_steps: int,
    signal_mode: int,
    episode_length_inout: wp.array(dtype=wp.int32),
    lap_mark_inout: wp.array(dtype=wp.int32),
    lap_last_inout: wp.array(dtype=wp.float32),
    stat_episodes_inout: wp.array(dtype=wp.int32),
    stat_progress_inout: wp.array(dtype=wp.float32),
    stat_laps_inout: wp.array(dtype=wp.int32),
    stat_steps_inout: wp.array(dtype=wp.int32),
    stat_timed_inout: wp.array(dtype=wp.int32),
    stat_lap_time_inout: wp.array(dtype=wp.float32),
    stat_par_laps_inout: wp.array(dtype=wp.int32),
    stat_par_ratio_inout: wp.array(dtype=wp.float32),
    done_out: wp.array(dtype=wp.int32),
    time_out_out: wp.array(dtype=wp.int32),
    done_reason_out: wp.array(dtype=wp.int32),
    final_progress_out: wp.array(dtype=wp.float32),
    final_lap_time_out: wp.array(dtype=wp.float32),
    signal_out: wp.array(dtype=wp.float32),
):
    """Close env ``e``'s step: count it, time a lap completed on it, decide why the episode
    ends (``ok`` False: INVALID; ``crashed``: OOB; ``laps >= max_laps``: LAPS; the step count:
    TIME_OUT), write the done flags, add an ended episode to the statistics and write the
    curriculum signal (``signal_mode`` 1: 1.0 where ``max_laps`` laps were completed, else
    0.0; 2: the last timed lap, s, ``+inf`` when none was timed; 0 leaves it as it is).

    Lap timing: on the step a lap completes (``lap_completed``), the time since the previous
    completion of the same episode, ``(steps - lap_mark) * dt``, is a timed lap (one loop of
    the course at racing speed; the first lap of an episode, from the standing start, is not
    timed); with a par (``has_par``) its ratio to ``par`` is summed too."""
    steps = episode_length_inout[e] + 1
    episode_length_inout[e] = steps
    lap_last = lap_last_inout[e]
    if ok and lap_completed:
        mark = lap_mark_inout[e]
        if mark >= 0:
            lap_s = float(steps - mark) * dt
            lap_last = lap_s
            stat_timed_inout[e] = stat_timed_inout[e] + 1
            stat_lap_time_inout[e] = stat_lap_time_inout[e] + lap_s
            if has_par:
                stat_par_laps_inout[e] = stat_par_laps_inout[e] + 1
                stat_par_ratio_inout[e] = stat_par_ratio_inout[e] + lap_s / par
        lap_mark_inout[e] = steps
    lap_last_inout[e] = lap_last
    final_lap_time_out[e] = lap_last
    reason = int(0)
    if not ok:
        reason = reason | _INVALID
    else:
        if crashed:
            reason = reason | _OOB
        if laps >= max_laps:
            reason = reason | _LAPS
    if steps >= max_episode_steps:
        reason = reason | _TIME_OUT
    done_reason_out[e] = reason
    done = reason != 0
    done_out[e] = wp.where(done, 1, 0)
    time_out_out[e] = wp.where(reason == _TIME_OUT, 1, 0)  # truncated, not terminated
    final_progress_out[e] = prog
    if done:
        stat_episodes_inout[e] = stat_episodes_inout[e] + 1
        stat_progress_inout[e] = stat_progress_inout[e] + prog
        stat_steps_inout[e] = stat_steps_inout[e] + steps
        if (reason & _LAPS) != 0:
            stat_laps_inout[e] = stat_laps_inout[e] + 1
    if signal_mode == _SIGNAL_SUCCESS:
        signal_out[e] = wp.where((reason & _LAPS) != 0, 1.0, 0.0)
    elif signal_mode == _SIGNAL_LAP_TIME:
        signal_out[e] = wp.where(wp.isfinite(lap_last), lap_last, wp.inf)
