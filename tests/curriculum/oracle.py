"""A NumPy oracle of :class:`track_gen.curriculum.LevelReplay`, written from its docs: the same
rule (rank-prioritized scores mixed with staleness, replays once the buffer is full, fresh
levels as the next epoch of the env's seed), the same random stream, the same score rules and
buffer insertion, in float64 / float32 NumPy scalars, envs in index order."""

from __future__ import annotations

import numpy as np

from track_gen.seeds import effective_seed

M32 = 0xFFFFFFFF
GOLDEN, OFFSET, SALT = 0x9E3779B9, 0x632BE5AB, 0x3C6EF372
INT32_MAX = 2**31 - 1


def fmix32(h: int) -> int:
    h &= M32
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & M32
    h ^= h >> 16
    return h


def draw(seed: int, step: int, e: int, k: int) -> float:
    """The uniform draw ``k`` of env ``e`` at update step ``step`` (the documented stream)."""
    key = fmix32((seed & M32) ^ fmix32(SALT))
    c = fmix32(key ^ fmix32(((step & M32) * GOLDEN + OFFSET) & M32))
    c = fmix32(c ^ fmix32((step >> 32) & M32))
    h = fmix32(c ^ (((2 * e + k) * GOLDEN) & M32))
    return float(h) / 4294967296.0


def replay_distribution(scores, last, step, temperature, staleness) -> np.ndarray:
    """P over the filled slots: (1 - rho) * rank weights + rho * staleness, float64."""
    n = len(scores)
    order = sorted(range(n), key=lambda i: (-float(scores[i]), i))  # rank 1: highest score
    rank = np.empty(n)
    rank[order] = np.arange(1, n + 1)
    w = (1.0 / rank) ** (1.0 / temperature)
    stale = (step - np.asarray(last, np.int64)).astype(np.float64)
    p_stale = stale / stale.sum() if stale.sum() > 0 else np.full(n, 1.0 / n)
    return (1.0 - staleness) * (w / w.sum()) + staleness * p_stale


class Oracle:
    """The level buffer and per-env bookkeeping, on the host."""

    def __init__(self, seeds, epochs, levels, *, buffer_size, replay_prob, score, staleness,
                 temperature, seed):  # fmt: skip
        self.B, self.rho, self.beta = buffer_size, staleness, temperature
        self.replay_prob, self.rule, self.seed = replay_prob, score, seed
        self.seed_b = np.zeros(buffer_size, np.int32)
        self.score = np.zeros(buffer_size, np.float32)
        self.last = np.zeros(buffer_size, np.int64)
        self.plays = np.zeros(buffer_size, np.int32)
        self.successes = np.zeros(buffer_size, np.float32)
        self.filled, self.step = 0, 0
        E = len(seeds)
        self.env_slot = np.full(E, -1, np.int32)
        self.env_level = np.asarray(levels, np.int32).copy()
        self.replayed = np.zeros(E, np.int32)
        self.base = np.asarray(seeds, np.int32).copy()
        self.fresh_epoch = np.asarray(epochs, np.int32).copy()

    def _score(self, x, par, plays, successes):
        f = np.float32
        if self.rule == "learnability":
            p = f(successes) / f(plays)
            return f(p * (f(1) - p))
        if self.rule == "regret":
            return f(min(max(f(1) - f(par) / f(x), f(0)), f(1)))
        return f(x)

    def update(self, done, signal, par=None) -> None:
        self.step += 1
        n = self.filled
        for e in np.flatnonzero(np.asarray(done) != 0):
            x = np.float32(signal[e])
            p = np.float32(par[e]) if self.rule == "regret" else np.float32(0)
            ok = (x > 0 and np.isfinite(p) and p > 0) if self.rule == "regret" else np.isfinite(x)
            if not ok:
                continue
            level = self.env_level[e]
            slot = int(self.env_slot[e])
            if slot >= n or (slot >= 0 and self.seed_b[slot] != level):
                slot = -1
            if slot < 0:
                hits = np.flatnonzero(self.seed_b[:n] == level)
                slot = int(hits[0]) if hits.size else -1
            s01 = np.float32(min(max(x, 0), 1)) if self.rule == "learnability" else np.float32(0)
            if slot >= 0:
                self.plays[slot] = min(int(self.plays[slot]) + 1, INT32_MAX)
                self.successes[slot] = np.float32(self.successes[slot] + s01)
                self.score[slot] = self._score(x, p, self.plays[slot], self.successes[slot])
                self.env_slot[e] = slot
                continue
            score = self._score(x, p, 1, s01)
            if n < self.B:
                slot, n = n, n + 1
            else:
                low = min(range(n), key=lambda j: (self.score[j], self.last[j], j))
                slot = low if score >= self.score[low] else -1
            if slot >= 0:
                self.seed_b[slot], self.score[slot] = level, score
                self.last[slot], self.plays[slot], self.successes[slot] = self.step, 1, s01
            self.env_slot[e] = slot
        self.filled = n

    def regenerate(self, mask) -> None:
        full = self.filled >= self.B
        cdf = None
        if full:
            P = replay_distribution(self.score, self.last, self.step, self.beta, self.rho)
            cdf = np.cumsum(P)
        touched = []
        for e in np.flatnonzero(np.asarray(mask) != 0):
            e = int(e)
            replay = full and draw(self.seed, self.step, e, 0) < self.replay_prob
            if replay:
                u = draw(self.seed, self.step, e, 1) * cdf[-1]
                slot = int(np.searchsorted(cdf, u, side="right"))
                slot = min(slot, self.B - 1)
                self.env_slot[e], self.env_level[e] = slot, self.seed_b[slot]
                touched.append(slot)
            else:
                ep = int(self.fresh_epoch[e])
                ep = 1 if ep >= INT32_MAX else ep + 1
                self.fresh_epoch[e] = ep
                self.env_slot[e] = -1
                self.env_level[e] = effective_seed(int(self.base[e]), ep)
            self.replayed[e] = int(replay)
        for slot in touched:
            self.last[slot] = self.step

    def state(self) -> dict:
        n = self.filled
        return {
            "filled": n,
            "seed": self.seed_b[:n], "score": self.score[:n], "last_played": self.last[:n],
            "plays": self.plays[:n], "successes": self.successes[:n], "step": self.step,
            "env_slot": self.env_slot, "env_level": self.env_level, "replayed": self.replayed,
        }  # fmt: skip
