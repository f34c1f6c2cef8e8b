"""The Warp kernels of :class:`~track_gen.curriculum.LevelReplay`: the rank weights, the
replay distribution, the per-env replay decision (with its undo) and the score update.

The random stream (mirrored bit for bit by the tests' NumPy oracle): ``key =
fmix32(uint32(seed) ^ fmix32(STREAM_SALT))`` on the host; at update step ``t`` (int64), env
``e`` and draw ``k`` (0: replay or not, 1: which level),

    c = fmix32(key ^ fmix32(uint32(t mod 2**32) * GOLDEN + OFFSET))
    c = fmix32(c ^ fmix32(uint32(t >> 32)))
    h = fmix32(c ^ (uint32(2 * e + k) * GOLDEN))
    u = h / 2**32  (float64, in [0, 1))
"""

from __future__ import annotations

import warp as wp

from ..seeds import effective_seed_wp, fmix32_wp, stage_seed
from .fields import ScoreRule

wp.set_module_options({"enable_backward": False})

#: The salt of the replay stream (distinct from every stage salt).
STREAM_SALT = 0x3C6EF372
_GOLDEN = 0x9E3779B9
_OFFSET = 0x632BE5AB
#: Largest epoch; a fresh level's epoch advanced past it restarts at 1 (as the generator's).
EPOCH_MAX = 2**31 - 1
#: Columns of the undo record a decision keeps per masked env.
UNDO_SEED, UNDO_EPOCH, UNDO_SLOT, UNDO_LEVEL, UNDO_FRESH, UNDO_REPLAYED = range(6)
UNDO_COLUMNS = 6

_GOLDEN_U32 = wp.constant(wp.uint32(_GOLDEN))
_OFFSET_U32 = wp.constant(wp.uint32(_OFFSET))
_LOW32 = wp.constant(wp.int64(0xFFFFFFFF))
_EPOCH_MAX = wp.constant(EPOCH_MAX)
_LEARNABILITY = wp.constant(int(ScoreRule.LEARNABILITY))
_REGRET = wp.constant(int(ScoreRule.REGRET))
_U_SCALE = wp.constant(wp.float64(1.0 / 4294967296.0))
_U0, _U1, _U2, _U3, _U4, _U5 = (wp.constant(i) for i in range(6))


def stream_key(seed: int) -> int:
    """The uint32 key of the replay stream of ``seed`` (host)."""
    return stage_seed(seed, STREAM_SALT) & 0xFFFFFFFF  # fmix32(seed ^ fmix32(salt))


@wp.func
def replay_draw(key: wp.uint32, step: wp.int64, e: wp.int32, k: wp.int32) -> wp.float64:
    """The uniform draw ``k`` of env ``e`` at update step ``step``, in [0, 1)."""
    lo = wp.uint32(step & _LOW32)
    hi = wp.uint32(step >> wp.int64(32))
    c = fmix32_wp(key ^ fmix32_wp(lo * _GOLDEN_U32 + _OFFSET_U32))
    c = fmix32_wp(c ^ fmix32_wp(hi))
    h = fmix32_wp(c ^ (wp.uint32(2 * e + k) * _GOLDEN_U32))
    return wp.float64(h) * _U_SCALE


@wp.kernel
def _rank_weights_kernel(
    # inputs
    level_score: wp.array(dtype=wp.float32),
    level_last: wp.array(dtype=wp.int64),
    filled: wp.array(dtype=wp.int32),
    # static
    inv_temperature: wp.float64,
    # scratch
    weight: wp.array(dtype=wp.float64),
    last_undo: wp.array(dtype=wp.int64),
):
    """Slot ``i``'s score weight ``(1 / rank) ** (1 / temperature)``, rank 1 the highest score
    (ties: the lower slot ranks first); 0 past the filled slots. Keeps the last-played steps
    for the undo of a refused regeneration."""
    i = wp.tid()
    last_undo[i] = level_last[i]
    n = filled[0]
    if i >= n:
        weight[i] = wp.float64(0.0)
        return
    s = level_score[i]
    rank = int(1)
    for j in range(n):
        sj = level_score[j]
        if sj > s or (sj == s and j < i):
            rank = rank + 1
    weight[i] = wp.pow(wp.float64(1.0) / wp.float64(rank), inv_temperature)


@wp.kernel
def _rank_keys_kernel(
    # inputs
    level_score: wp.array(dtype=wp.float32),
    level_last: wp.array(dtype=wp.int64),
    filled: wp.array(dtype=wp.int32),
    # scratch
    keys: wp.array(dtype=wp.float32),
    order: wp.array(dtype=wp.int32),
    last_undo: wp.array(dtype=wp.int64),
):
    """The sort keys of the CPU ranking: ``-score`` (-0 made +0, so equal scores tie and the
    stable sort keeps them in slot order), ``+inf`` past the filled slots. Keeps the
    last-played steps for the undo of a refused regeneration."""
    i = wp.tid()
    last_undo[i] = level_last[i]
    k = wp.float32(wp.inf)
    if i < filled[0]:
        k = -level_score[i]
        if k == 0.0:
            k = 0.0
    keys[i] = k
    order[i] = i


@wp.kernel
def _order_weights_kernel(
    # inputs
    order: wp.array(dtype=wp.int32),
    filled: wp.array(dtype=wp.int32),
    # static
    inv_temperature: wp.float64,
    # scratch
    weight: wp.array(dtype=wp.float64),
):
    """The score weight of the slot at sorted position ``k``: ``(1 / (k + 1)) ** (1 /
    temperature)`` (the same ranks as :func:`_rank_weights_kernel`), 0 past the filled slots."""
    k = wp.tid()
    i = order[k]
    w = wp.float64(0.0)
    if k < filled[0]:
        w = wp.pow(wp.float64(1.0) / wp.float64(k + 1), inv_temperature)
    weight[i] = w


@wp.kernel
def _replay_cdf_kernel(
    # inputs
    weight: wp.array(dtype=wp.float64),
    level_last: wp.array(dtype=wp.int64),
    filled: wp.array(dtype=wp.int32),
    step: wp.array(dtype=wp.int64),
    # static
    buffer_size: int,
    staleness: wp.float64,
    # outputs
    cdf_out: wp.array(dtype=wp.float64),
):
    """One thread: the cumulative replay distribution ``P = (1 - rho) * P_score + rho *
    P_staleness`` over the slots, in float64, summed in slot order (written only when the
    buffer is full: replays wait for it). ``P_staleness`` is proportional to ``step -
    last_played`` (uniform when every level was played this step)."""
    n = filled[0]
    if n < buffer_size:
        return
    t = step[0]
    w_sum = wp.float64(0.0)
    s_sum = wp.float64(0.0)
    for i in range(n):
        w_sum = w_sum + weight[i]
        s_sum = s_sum + wp.float64(t - level_last[i])
    one = wp.float64(1.0)
    c = wp.float64(0.0)
    for i in range(n):
        p_score = weight[i] / w_sum
        p_stale = one / wp.float64(n)
        if s_sum > wp.float64(0.0):
            p_stale = wp.float64(t - level_last[i]) / s_sum
        a = (one - staleness) * p_score
        b = staleness * p_stale
        c = c + (a + b)
        cdf_out[i] = c


@wp.kernel
def _decide_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    cdf: wp.array(dtype=wp.float64),
    level_seed: wp.array(dtype=wp.int32),
    filled: wp.array(dtype=wp.int32),
    step: wp.array(dtype=wp.int64),
    fresh_base: wp.array(dtype=wp.int32),
    # static
    key: wp.uint32,
    buffer_size: int,
    replay_prob: wp.float64,
    # outputs
    fresh_epoch_inout: wp.array(dtype=wp.int32),
    level_last_out: wp.array(dtype=wp.int64),
    env_slot_inout: wp.array(dtype=wp.int32),
    env_level_inout: wp.array(dtype=wp.int32),
    replayed_inout: wp.array(dtype=wp.int32),
    seeds_inout: wp.array(dtype=wp.int32),
    epochs_inout: wp.array(dtype=wp.int32),
    undo_out: wp.array2d(dtype=wp.int32),
):
    """A masked env replays a buffered level (draw 0 below ``replay_prob``, full buffer; the
    level by inverse CDF of draw 1) or draws a fresh one (its next epoch of its base seed);
    its seed becomes the level's effective seed and its epoch 0, so the masked regeneration
    that follows builds that level. Unmasked envs are untouched."""
    e = wp.tid()
    if mask[e] == 0:
        return
    t = step[0]
    undo_out[e, _U0] = seeds_inout[e]
    undo_out[e, _U1] = epochs_inout[e]
    undo_out[e, _U2] = env_slot_inout[e]
    undo_out[e, _U3] = env_level_inout[e]
    undo_out[e, _U4] = fresh_epoch_inout[e]
    undo_out[e, _U5] = replayed_inout[e]
    replay = int(0)
    if filled[0] >= buffer_size:
        if replay_draw(key, t, e, 0) < replay_prob:
            replay = 1
    level = int(0)
    slot = int(-1)
    if replay != 0:
        u = replay_draw(key, t, e, 1) * cdf[buffer_size - 1]
        lo = int(0)
        hi = buffer_size - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if u < cdf[mid]:
                hi = mid
            else:
                lo = mid + 1
        slot = lo
        level = level_seed[slot]
        level_last_out[slot] = t  # every env replaying the slot writes the same value
    else:
        ep = fresh_epoch_inout[e]
        if ep >= _EPOCH_MAX:
            ep = 1
        else:
            ep = ep + 1
        fresh_epoch_inout[e] = ep
        level = effective_seed_wp(fresh_base[e], ep)
    env_slot_inout[e] = slot
    env_level_inout[e] = level
    replayed_inout[e] = replay
    seeds_inout[e] = level
    epochs_inout[e] = 0


@wp.kernel
def _undo_decide_kernel(
    # inputs
    mask: wp.array(dtype=wp.int32),
    undo: wp.array2d(dtype=wp.int32),
    # outputs
    seeds_out: wp.array(dtype=wp.int32),
    epochs_out: wp.array(dtype=wp.int32),
    env_slot_out: wp.array(dtype=wp.int32),
    env_level_out: wp.array(dtype=wp.int32),
    fresh_epoch_out: wp.array(dtype=wp.int32),
    replayed_out: wp.array(dtype=wp.int32),
):
    """Put back what :func:`_decide_kernel` changed for the masked envs (a refused regeneration)."""
    e = wp.tid()
    if mask[e] == 0:
        return
    seeds_out[e] = undo[e, _U0]
    epochs_out[e] = undo[e, _U1]
    env_slot_out[e] = undo[e, _U2]
    env_level_out[e] = undo[e, _U3]
    fresh_epoch_out[e] = undo[e, _U4]
    replayed_out[e] = undo[e, _U5]


@wp.func
def signal_usable(rule: int, x: float, par: float) -> bool:
    """Whether a done env's signal scores its level: finite for value_loss and learnability;
    for regret a lap time > 0 (+inf: no lap) and a finite par time > 0."""
    if rule == _REGRET:
        return x > 0.0 and wp.isfinite(par) and par > 0.0
    return wp.isfinite(x)


@wp.func
def rule_score(rule: int, x: float, par: float, plays: int, successes: float) -> float:
    """The level's score after this episode (``plays`` / ``successes`` already counting it)."""
    if rule == _LEARNABILITY:
        p = successes / float(plays)
        return p * (1.0 - p)
    if rule == _REGRET:
        return wp.clamp(1.0 - par / x, 0.0, 1.0)
    return x


@wp.kernel
def _update_scores_kernel(
    # inputs
    done: wp.array(dtype=wp.int32),
    signal: wp.array(dtype=wp.float32),
    par: wp.array(dtype=wp.float32),
    env_level: wp.array(dtype=wp.int32),
    # static
    num_envs: int,
    buffer_size: int,
    rule: int,
    # outputs
    step_inout: wp.array(dtype=wp.int64),
    filled_inout: wp.array(dtype=wp.int32),
    env_slot_inout: wp.array(dtype=wp.int32),
    level_seed_inout: wp.array(dtype=wp.int32),
    level_score_inout: wp.array(dtype=wp.float32),
    level_last_inout: wp.array(dtype=wp.int64),
    level_plays_inout: wp.array(dtype=wp.int32),
    level_successes_inout: wp.array(dtype=wp.float32),
):
    """One thread, envs in index order (deterministic on every device): the step counter
    advances; each done env with a usable signal scores its level: a buffered level gets its
    new score; a level not in the buffer takes a free slot, or replaces the lowest-scored
    level (the stalest among equal scores, then the lowest slot) when its score is at least
    that one's. Envs not done are not read."""
    t = step_inout[0] + wp.int64(1)
    step_inout[0] = t
    n = filled_inout[0]
    for e in range(num_envs):
        if done[e] == 0:
            continue
        x = signal[e]
        p = float(0.0)
        if rule == _REGRET:
            p = par[e]
        if not signal_usable(rule, x, p):
            continue
        level = env_level[e]
        slot = env_slot_inout[e]
        if slot >= n:
            slot = -1
        if slot >= 0:
            if level_seed_inout[slot] != level:
                slot = -1  # the level was replaced since the env drew it
        if slot < 0:
            for j in range(n):
                if slot < 0 and level_seed_inout[j] == level:
                    slot = j
        s01 = float(0.0)
        if rule == _LEARNABILITY:
            s01 = wp.clamp(x, 0.0, 1.0)
        if slot >= 0:
            plays = level_plays_inout[slot]
            if plays < 2147483647:
                plays = plays + 1
            successes = level_successes_inout[slot] + s01
            level_plays_inout[slot] = plays
            level_successes_inout[slot] = successes
            level_score_inout[slot] = rule_score(rule, x, p, plays, successes)
            env_slot_inout[e] = slot
            continue
        score = rule_score(rule, x, p, 1, s01)
        if n < buffer_size:
            slot = n
            n = n + 1
        else:
            low = int(0)
            for j in range(1, n):
                sj = level_score_inout[j]
                sl = level_score_inout[low]
                if sj < sl or (sj == sl and level_last_inout[j] < level_last_inout[low]):
                    low = j
            if score >= level_score_inout[low]:
                slot = low
        if slot >= 0:
            level_seed_inout[slot] = level
            level_score_inout[slot] = score
            level_last_inout[slot] = t
            level_plays_inout[slot] = 1
            level_successes_inout[slot] = s01
        env_slot_inout[e] = slot
    filled_inout[0] = n


@wp.kernel
def _undo_last_kernel(
    # inputs
    last_undo: wp.array(dtype=wp.int64),
    # outputs
    level_last_out: wp.array(dtype=wp.int64),
):
    """Put back the last-played steps a refused regeneration's decisions wrote."""
    i = wp.tid()
    level_last_out[i] = last_undo[i]
