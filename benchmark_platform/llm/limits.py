"""What keeps one provider healthy: a concurrency bound, token buckets for requests and tokens per minute, a circuit
breaker, and the retry delay. All are asyncio objects of one event loop."""

from __future__ import annotations

import asyncio
import random
import time

from benchmark_platform.llm.config import GatewaySettings, ProviderLimits


class TokenBucket:
    """`per_minute` units, refilled continuously, holding at most one second's worth. A request larger than that
    waits for a full bucket and drives the level below zero, so big requests are neither starved nor free."""

    def __init__(self, per_minute: int) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate)
        self.level = self.capacity
        self._stamp = time.monotonic()
        self._lock = asyncio.Lock()  # waiters are served in arrival order

    def _refill(self) -> None:
        now = time.monotonic()
        self.level = min(self.capacity, self.level + (now - self._stamp) * self.rate)
        self._stamp = now

    async def acquire(self, amount: float) -> None:
        async with self._lock:
            self._refill()
            need = min(amount, self.capacity)
            while self.level < need:
                await asyncio.sleep((need - self.level) / self.rate)
                self._refill()
            self.level -= amount

    def refund(self, amount: float) -> None:
        """Give back what a call reserved but did not use (an estimate above its real token count)."""
        self._refill()
        self.level = min(self.capacity, self.level + amount)


class CircuitOpen(Exception):
    pass


class CircuitBreaker:
    """Opens after `failures` consecutive failed attempts (server errors, timeouts, unreadable bodies; not 429s);
    while open every call fails at once; after `cooldown_s` one probe call goes through and decides."""

    def __init__(self, failures: int, cooldown_s: float) -> None:
        self.threshold = failures
        self.cooldown_s = cooldown_s
        self.consecutive = 0
        self.opened_at: float | None = None
        self.probing = False
        self.times_opened = 0

    def before_attempt(self) -> None:
        if self.opened_at is None:
            return
        if self.probing or time.monotonic() - self.opened_at < self.cooldown_s:
            raise CircuitOpen(f"circuit open after {self.consecutive} consecutive failures")
        self.probing = True

    def success(self) -> None:
        self.consecutive = 0
        self.opened_at = None
        self.probing = False

    def failure(self) -> None:
        self.consecutive += 1
        if self.probing or self.consecutive >= self.threshold:
            if self.opened_at is None or self.probing:
                self.times_opened += 1
            self.opened_at = time.monotonic()
            self.probing = False


class Provider:
    """The shared state of one provider inside one gateway."""

    def __init__(self, name: str, limits: ProviderLimits, settings: GatewaySettings) -> None:
        self.name = name
        self.max_concurrency = limits.max_concurrency
        self.slots = asyncio.Semaphore(limits.max_concurrency)
        self.requests = TokenBucket(limits.rpm) if limits.rpm else None
        self.tokens = TokenBucket(limits.tpm) if limits.tpm else None
        self.breaker = CircuitBreaker(settings.breaker_failures, settings.breaker_cooldown_s)

    async def admit(self, est_tokens: int) -> None:
        """Wait for the rate limits (before taking a slot, so waiting holds none)."""
        if self.requests is not None:
            await self.requests.acquire(1)
        if self.tokens is not None:
            await self.tokens.acquire(est_tokens)


def retry_delay(attempt: int, retry_after: float | None, settings: GatewaySettings, rng: random.Random) -> float:
    """Wait before retry number `attempt` (1-based): the server's Retry-After plus up to 5% jitter when it gave one,
    else exponential backoff with equal jitter, capped at `backoff_max_s`."""
    if retry_after is not None:
        return retry_after * (1.0 + 0.05 * rng.random())
    ceiling = min(settings.backoff_max_s, settings.backoff_base_s * 2.0 ** (attempt - 1))
    return ceiling / 2 + rng.random() * ceiling / 2


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds form; an HTTP date falls back to backoff)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
