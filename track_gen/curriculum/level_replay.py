"""``LevelReplay``: prioritized level replay at the auto-reset, on the course's device."""

from __future__ import annotations

import weakref

import warp as wp

from ..core.checks import check_array, check_mask
from ..core.errors import CaptureError
from ..core.exec import capture_stream, check_stream, is_capturing, require_not_capturing
from ..course import Course
from .buffer import LevelBuffer
from .fields import (
    BUFFER_SIZE,
    REPLAY_PROB,
    SCORE,
    SCORE_NAMES,
    SEED,
    STALENESS,
    TEMPERATURE,
    ScoreRule,
)
from .kernels import (
    _decide_kernel,
    _order_weights_kernel,
    _rank_keys_kernel,
    _rank_weights_kernel,
    _replay_cdf_kernel,
    _undo_decide_kernel,
    _undo_last_kernel,
    _update_scores_kernel,
    stream_key,
)

__all__ = ["LevelReplay"]

#: The curriculum that drives each course (the newest one built on it).
_DRIVER: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class LevelReplay:
    """A buffer of levels (effective seeds, scores, last-played steps) that decides, at each
    auto-reset, whether a done env replays a buffered level or gets a fresh one.

    Prioritized level replay (Jiang et al., 2021): once the buffer is full, a reset env
    replays with probability ``replay_prob``, drawing slot ``i`` with probability ``P_i =
    (1 - staleness) * P_score_i + staleness * P_stale_i``, ``P_score`` proportional to
    ``(1 / rank_i) ** (1 / temperature)`` (rank 1: the highest score) and ``P_stale``
    proportional to the steps since the level was last drawn. Otherwise it draws a fresh
    level: the next epoch of its own seed (with ``replay_prob=0`` every env gets the courses
    ``course.regenerate(mask, advance=True)`` would give it). Every decision runs in a kernel
    from a random stream that is a pure function of ``seed`` and the device-side update step.

    Args:
        course: the :class:`~track_gen.course.Course` whose envs it drives; its seeds must be
            the library's to write (an int or a ``PerEnvSeededRNG``, not your own array).
        buffer_size: slots (``BUFFER_SIZE``: 1 to 65536).
        replay_prob: float in [0, 1].
        score: ``"value_loss"`` (the signal is the score: PLR's positive value loss, which
            you compute), ``"learnability"`` (the signal is the episode's success, clamped to
            [0, 1]; the score is ``p * (1 - p)`` of the level's mean success ``p``) or
            ``"regret"`` (the signal is the episode's lap time in s, ``+inf`` for no lap; the
            score is ``1 - par / lap_time`` clamped to [0, 1], ``par`` the racing line's
            lap time: the course needs a ``tools.RacingLine`` component).
        staleness: rho in [0, 1]. temperature: beta in [1e-3, 1e3]. seed: int32.

    Each step, in order: :meth:`update` with the ended episodes' signal, then
    :meth:`regenerate` on the same done mask (it replaces ``course.regenerate(mask=done,
    advance=True)``). Both launch kernels only: no host work, no allocation, recordable in
    the step graph (CPU and CUDA). A masked env's course seed becomes its level's effective
    seed and its epoch 0 (``course.result.generation`` then reads 0): log
    ``buffer.env_level`` to rebuild an episode's course. One curriculum drives a course: a
    newer one built on it takes over, and this one raises RuntimeError at its next call.

    Attributes:
        course: the course. buffer: the :class:`LevelBuffer` (device arrays, stable).
        rule: the :class:`ScoreRule`. num_envs, buffer_size, replay_prob, staleness,
        temperature, seed: the settings.
    """

    def __init__(
        self,
        course: Course,
        *,
        buffer_size: int,
        replay_prob: float,
        score: str = SCORE.default,
        staleness: float = STALENESS.default,
        temperature: float = TEMPERATURE.default,
        seed: int = SEED.default,
    ):
        if not isinstance(course, Course):
            raise TypeError(
                f"course must be a track_gen.course.Course, got {type(course).__name__}"
            )
        self.buffer_size = BUFFER_SIZE.check(buffer_size, "LevelReplay buffer_size")
        self.replay_prob = REPLAY_PROB.check(replay_prob, "LevelReplay replay_prob")
        score = SCORE.check(score, "LevelReplay score")
        self.staleness = STALENESS.check(staleness, "LevelReplay staleness")
        self.temperature = TEMPERATURE.check(temperature, "LevelReplay temperature")
        self.seed = SEED.check(seed, "LevelReplay seed")
        self.rule = ScoreRule(SCORE_NAMES.index(score))
        state = course.seeds
        if state.rng is None and not state.owned:
            raise ValueError(
                "course: its seeds are bound to your own array, which the library never "
                "writes, and a replay writes each reset env's seed: build the course with "
                "seeds=<int> or seeds=PerEnvSeededRNG(...)"
            )
        self._par = None
        if self.rule == ScoreRule.REGRET:
            planner = course.racing_line
            if planner is None:
                raise ValueError(
                    "score = 'regret' scores against the racing line's par time, and this "
                    "course has no 'racing_line' component: add tools.RacingLine(...) to the "
                    "course (extra=[...]) or pick score='value_loss' or 'learnability'"
                )
            self._par = planner.line.lap_time
        self.course = course
        self.device = course.device
        require_not_capturing(self.device, "LevelReplay construction")
        self.num_envs = course.result.num_envs
        seeds, epochs = state.snapshot()
        self.buffer = LevelBuffer.allocate(
            self.buffer_size, state.effective_seeds(), seeds, epochs, self.device
        )
        if self._par is None:
            self._par = self.buffer.score  # never read by the kernel for this rule
        self._key = stream_key(self.seed)
        _DRIVER[course] = weakref.ref(self)

    # ------------------------------------------------------------------ checks
    def _check_driver(self, call: str) -> None:
        driver = _DRIVER.get(self.course)
        if driver is None or driver() is not self:
            raise RuntimeError(
                f"LevelReplay.{call}: a newer LevelReplay was built on this course and drives "
                "its seeds now (two would overwrite each other's levels): use that one"
            )

    def _stream(self, stream, call: str):
        """The stream a call launches on, the one the course's regeneration takes."""
        if stream is not None:
            return check_stream(stream, self.device)
        own = self.course.stream
        if own is not None:
            if is_capturing(self.device) and not own.is_capturing:
                raise CaptureError(
                    f"LevelReplay.{call}: the course was built with stream={own!r}, and "
                    "another stream is recording: pass stream=<the capturing stream>"
                )
            return own
        return capture_stream(self.device)

    # ------------------------------------------------------------------ per step
    def update(self, done: wp.array, score: wp.array, *, stream: wp.Stream | None = None) -> None:
        """Score the levels of the episodes that ended (call once per step, before
        :meth:`regenerate`).

        Args:
            done: int32 ``[E]``: 1 (any nonzero) where the env's episode ended this step.
            score: float32 ``[E]``: the ended episode's signal (see the class docs); read
                only where ``done``. A NaN (or, except for regret's ``+inf``, an infinite
                value) leaves that level unscored.
            stream: the stream to launch on (default: the course's).

        A done env's buffered level gets its new score; a level not buffered enters a free
        slot, or replaces the lowest-scored level when its score is at least that one's.
        The update step advances by one, whatever ``done`` holds. One launch.
        """
        self._check_driver("update()")
        E, dev = self.num_envs, self.device
        check_array("done", done, wp.int32, E, dev, "pass the step's [E] int32 done mask")
        check_array("score", score, wp.float32, E, dev, "pass one float32 signal per env")
        stream = self._stream(stream, "update()")
        b = self.buffer
        wp.launch(
            _update_scores_kernel,
            1,
            inputs=[done, score, self._par, b.env_level, E, self.buffer_size, int(self.rule)],
            outputs=[
                b.step,
                b.filled,
                b.env_slot,
                b.seed,
                b.score,
                b.last_played,
                b.plays,
                b.successes,
            ],
            device=dev,
            stream=stream,
        )

    def regenerate(self, mask: wp.array | None = None, *, stream: wp.Stream | None = None) -> None:
        """Give the masked envs (None: every env) their next level and build it.

        Each masked env replays a buffered level or draws a fresh one (class docs), its seed
        and epoch are written, and ``course.regenerate(mask=mask, advance=False)`` rebuilds
        it; unmasked envs keep everything. Three launches (on the CPU four and a sort) before
        the course's regeneration. A call the course refuses puts back every seed, epoch and
        buffer value it wrote.
        """
        self._check_driver("regenerate()")
        check_mask(mask, self.num_envs, self.device, hint="pass the step's [E] int32 done mask")
        stream = self._stream(stream, "regenerate()")
        b, B, dev = self.buffer, self.buffer_size, self.device
        state = self.course.seeds
        mask = b.everyone if mask is None else mask
        self._rank(stream)
        wp.launch(
            _replay_cdf_kernel,
            1,
            inputs=[b.weight, b.last_played, b.filled, b.step, B, self.staleness],
            outputs=[b.cdf],
            device=dev,
            stream=stream,
        )
        wp.launch(
            _decide_kernel,
            self.num_envs,
            inputs=[
                mask,
                b.cdf,
                b.seed,
                b.filled,
                b.step,
                b.fresh_base,
                self._key,
                B,
                self.replay_prob,
            ],
            outputs=[
                b.fresh_epoch,
                b.last_played,
                b.env_slot,
                b.env_level,
                b.replayed,
                state.seeds,
                state.epochs,
                b.undo,
            ],
            device=dev,
            stream=stream,
        )
        try:
            self.course.regenerate(mask=mask, advance=False, stream=stream)
        except BaseException:
            if not is_capturing(dev):
                self._undo(mask, stream)
            raise

    def _rank(self, stream) -> None:
        """The score weight of every slot from its rank: on the CPU a radix sort (O(B)), on
        CUDA one thread per slot counting the higher-ranked slots (O(B) each, no sort's
        temporary memory); the same ranks either way."""
        b, B, dev = self.buffer, self.buffer_size, self.device
        inv_t = 1.0 / self.temperature
        if not dev.is_cpu:
            wp.launch(
                _rank_weights_kernel,
                B,
                inputs=[b.score, b.last_played, b.filled, inv_t],
                outputs=[b.weight, b.last_undo],
                device=dev,
                stream=stream,
            )
            return
        wp.launch(
            _rank_keys_kernel,
            B,
            inputs=[b.score, b.last_played, b.filled],
            outputs=[b.keys, b.order, b.last_undo],
            device=dev,
        )
        wp.utils.radix_sort_pairs(b.keys, b.order, B)
        wp.launch(
            _order_weights_kernel,
            B,
            inputs=[b.order, b.filled, inv_t],
            outputs=[b.weight],
            device=dev,
        )

    def _undo(self, mask, stream) -> None:
        b, state = self.buffer, self.course.seeds
        wp.launch(
            _undo_decide_kernel,
            self.num_envs,
            inputs=[mask, b.undo],
            outputs=[state.seeds, state.epochs, b.env_slot, b.env_level, b.fresh_epoch, b.replayed],
            device=self.device,
            stream=stream,
        )
        wp.launch(
            _undo_last_kernel,
            self.buffer_size,
            inputs=[b.last_undo],
            outputs=[b.last_played],
            device=self.device,
            stream=stream,
        )

    # ------------------------------------------------------------------ host views
    def snapshot(self) -> dict:
        """Host copies of the buffer (filled slots only) and the per-env bookkeeping (reads
        the device: between rollouts, not per step): ``filled`` (int, the slots in use),
        ``seed``, ``score``, ``last_played``, ``plays``, ``successes`` (``[filled]``),
        ``step`` (int), ``env_slot``, ``env_level``, ``replayed`` (``[E]``)."""
        require_not_capturing(self.device, "LevelReplay.snapshot()")
        b = self.buffer
        n = int(b.filled.numpy()[0])
        out: dict = {"filled": n}
        out.update({k: getattr(b, k).numpy()[:n].copy() for k in ("seed", "score", "last_played")})
        out.update({k: getattr(b, k).numpy()[:n].copy() for k in ("plays", "successes")})
        out["step"] = int(b.step.numpy()[0])
        for k in ("env_slot", "env_level", "replayed"):
            out[k] = getattr(b, k).numpy().copy()
        return out

    def __repr__(self) -> str:
        return (
            f"LevelReplay(buffer_size={self.buffer_size}, replay_prob={self.replay_prob}, "
            f"score={SCORE_NAMES[self.rule]!r}, staleness={self.staleness}, "
            f"temperature={self.temperature}, seed={self.seed})"
        )
