"""Running several pages at a time: which pages start first, how many fit the memory (and the largest memory a run
reached, :class:`MemoryWatch`), the worker processes and their single-threaded environment, and the pages that wait
for the numbers of others (:func:`run_pages`)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from pathlib import Path

from jtc_utils.book.build.pages import READERS, START_FIRST


@contextlib.contextmanager
def environ(updates: dict, defaults: dict | None = None):
    """``os.environ`` with ``updates`` set (and ``defaults`` where not set already) for the block, every one of those
    variables restored afterwards: what the kernels and workers started inside inherit."""
    saved = {k: os.environ.get(k) for k in (*updates, *(defaults or {}))}
    os.environ.update(updates)
    for k, v in (defaults or {}).items():
        os.environ.setdefault(k, v)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _ignore_interrupts() -> None:
    """A page worker's start: Ctrl-C is the parent's to handle (it stops the workers), never a traceback per worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def waits_for(name: str, names: list[str], readers=READERS) -> list[str]:
    """The pages of ``names`` that page ``name`` waits for (its ``reads``, :data:`jtc_utils.book.build.pages.READERS`;
    run in parallel, a reader starts only when those of its pages that are being executed have finished): none for a
    page that reads no other page's numbers."""
    if name not in readers:
        return []
    reads = readers[name]
    before = names[: names.index(name)]
    return before if reads is None else [n for n in before if n in reads]


ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


# the largest resident memory one page's kernel may reach in a cold whole-book run (the budget: 6 GB; measured
# 2026-11-27: the model-and-text page 5.55 GB; section 3 6.84 GB before its fits read the states without copies,
# which saves 1.16 GB, and 3.73 GB after with the hidden states already cached): `make book` runs two pages at a
# time only where both fit
PAGE_PEAK_GB = 6.0


def available_memory_gb() -> float:
    """Memory the machine can give now (``MemAvailable``), in GB."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES") / 2**30


class MemoryWatch:
    """The largest resident memory of this process's descendants together (a page's kernel, or a custom book's page
    workers and their kernels), sampled every ``every_s`` seconds from ``/proc`` while the block runs; 0 where there
    is no ``/proc``."""

    def __init__(self, every_s: float = 0.5):
        self.every_s, self.peak_gb, self._stop = every_s, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    @staticmethod
    def descendants_gb(root: int | None = None) -> float:
        """Resident memory of the processes below ``root`` (default: this one), in GB."""
        parent, rss = {}, {}
        for status in Path("/proc").glob("[0-9]*/status"):
            try:
                fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
            except OSError:
                continue  # ended while read
            pid = int(status.parent.name)
            parent[pid] = int(fields.get("PPid", "0"))
            rss[pid] = int(fields.get("VmRSS", "0 kB").split()[0]) * 1024
        root = os.getpid() if root is None else root
        below, frontier = set(), {root}
        while frontier:
            frontier = {p for p, pp in parent.items() if pp in frontier} - below
            below |= frontier
        return sum(rss[p] for p in below) / 2**30

    def _watch(self):
        while not self._stop.wait(self.every_s):
            self.peak_gb = max(self.peak_gb, self.descendants_gb())

    def __enter__(self):
        if Path("/proc/self/status").exists():
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        return False


def jobs_that_fit(jobs: int, page_gb: float = PAGE_PEAK_GB) -> int:
    """``jobs``, or fewer where that many pages at their peak would not fit the memory available now."""
    return max(1, min(jobs, int(available_memory_gb() // page_gb)))


def start_order(names: list[str], first=START_FIRST) -> list[str]:
    """``names`` with the pages of ``first`` (each page's ``start``, :data:`jtc_utils.book.build.pages.START_FIRST`: the
    long pages) moved to the front (in that order); the others keep theirs."""
    return sorted(names, key=lambda n: first.index(n) if n in first else len(first))


def _ahead(work) -> float:
    """Run one page's work ahead (see :func:`run_pages`) in a worker; its seconds."""
    import time

    t0 = time.time()
    work()
    return time.time() - t0


def ahead_name(page: str) -> str:
    return f"{page} (ahead)"


def run_pages(
    names: list[str], run_one, jobs: int = 1, log=print, readers=READERS, order=None, ahead: dict | None = None
) -> dict:
    """Run ``run_one(name)`` (a picklable function returning seconds, or None for a page already up to date) for
    every page in ``names``, in ``jobs`` worker processes; returns ``{name: seconds or None}``. One at a time, the
    pages run in the order of ``names``; several at a time, they start in the order of ``order`` (default
    :func:`start_order` of ``names``), a reader still waiting for the pages it reads (:func:`waits_for`).
    ``ahead`` (several at a time only): page -> a picklable function of no arguments that does work of that page
    which reads no other page's numbers (it fills the on-disk cache the page then reads): it starts in a worker of its
    own just before the page's place in the start order, and the page waits for it, so that such work does not run
    alone at the end of the build beside an idle core (the claims page's recomputations).
    With ``jobs`` > 1 every worker and the kernels it starts are single-threaded (``ONE_THREAD``): on two cores two
    one-thread pages finish sooner than one two-thread page after another (much of a page is Python and small
    kernels), and they never spin-wait on each other's OpenMP threads; workers that need the same cached result
    compute it once (:func:`jtc_utils.core.infra.cache.computing`). A page in ``readers`` starts only when every page
    before it has finished. A failure stops new pages from starting; the running ones finish (each is its own
    transaction) and the first failure is raised."""
    times = {}
    if jobs <= 1:
        for name in names:
            times[name] = run_one(name)
            log(f"  {name}: " + ("up to date" if times[name] is None else f"{times[name]:.0f} s"))
        return times
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pending, running = list(start_order(names) if order is None else order), {}
    if sorted(pending) != sorted(names):
        raise ValueError(f"the start order {order} must hold the same pages as {names}")
    ahead = {page: work for page, work in (ahead or {}).items() if page in names}
    for page in ahead:
        pending.insert(pending.index(page), ahead_name(page))
    with environ(ONE_THREAD):  # the workers inherit it, and their kernels from them
        with ProcessPoolExecutor(
            max_workers=jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_ignore_interrupts
        ) as pool:
            try:
                failure = _schedule(pool, names, run_one, jobs, log, readers, pending, running, times, ahead)
            except KeyboardInterrupt:  # stop now: the running pages' transactions commit nothing
                for child in multiprocessing.active_children():
                    child.terminate()
                # then wait for the pool's manager thread, which sees the workers gone and closes its pipe: left
                # running, it can close that pipe while the interpreter's exit hook writes to it (a traceback
                # from concurrent.futures on the way out, Python 3.11)
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    if failure is not None:
        raise failure
    return {n: t for n, t in times.items() if n in names}


def _schedule(pool, names, run_one, jobs, log, readers, pending, running, times, ahead):
    """run_pages' loop over a pool of workers (see there): fills ``times``; returns the first failure, or None."""
    from concurrent.futures import FIRST_COMPLETED, wait

    failure, works = None, {ahead_name(page): work for page, work in ahead.items()}
    while running or (pending and failure is None):
        for name in list(pending):
            if failure is not None or len(running) >= jobs:
                break
            if any(n not in times for n in waits_for(name, names, readers)) or (
                name in ahead and ahead_name(name) not in times
            ):
                continue  # waits for the pages whose numbers it reads, or for its own work ahead
            pending.remove(name)
            if name in works:
                log(f"executing {name}: the work of the page that reads no other page's numbers ...")
                running[pool.submit(_ahead, works[name])] = name
            else:
                log(f"executing {name} ...")
                running[pool.submit(run_one, name)] = name
        done, _ = wait(running, return_when=FIRST_COMPLETED)
        for fut in done:
            name = running.pop(fut)
            try:
                times[name] = fut.result()
            except Exception as e:  # noqa: BLE001 - the first failure is raised once the others end
                failure = failure or e
                times[name] = None
                log(f"  {name}: failed")
                continue
            log(f"  {name}: " + ("up to date" if times[name] is None else f"{times[name]:.0f} s"))
    return failure
