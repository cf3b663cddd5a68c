"""Dask's cost per task, for the projection of a cluster build (issue 32): what a task costs beyond its work.

    nice -n 19 python bench/dask_overhead.py --tasks 2000 --workers 2 [--payload-kb 0 60]

Starts a LocalCluster (worker processes, one thread each, as `obs build --dask local` does), then submits
`--tasks` tasks that do no work and return `--payload-kb` KB of bytes (a tiny run's pages and data files come
back to the client in its task's result, ~60 KB), one task per key and gathered as they complete, the way
`obs.cluster` does. Prints, per payload: the wall time per task with the workers side by side, the client
process's CPU per task (the scheduler of a LocalCluster runs in the client process), the workers' CPU per task
(all of it overhead: the task does nothing), and the cluster's start.
A benchmark: it prints numbers and asserts nothing; run it by hand, never from the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import uuid


def _task(i: int, size: int) -> bytes:
    return bytes(size)


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def measure(client: object, tasks: int, size: int) -> dict[str, float]:
    from distributed import as_completed

    token = uuid.uuid4().hex[:8]
    workers_cpu = sum(client.run(_cpu).values())  # type: ignore[attr-defined]
    cpu, wall = _cpu(), time.perf_counter()
    futures = [client.submit(_task, i, size, key=f"bench-{token}-{i}", pure=False) for i in range(tasks)]  # type: ignore[attr-defined]
    got = 0
    for fut in as_completed(futures, loop=client.loop):  # type: ignore[attr-defined]
        got += len(fut.result())
        fut.release()
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    workers_cpu = sum(client.run(_cpu).values()) - workers_cpu  # type: ignore[attr-defined]
    return {
        "payload_kb": size / 1024,
        "tasks": tasks,
        "wall_ms_per_task": 1000 * wall / tasks,
        "client_cpu_ms_per_task": 1000 * cpu / tasks,
        "workers_cpu_ms_per_task": 1000 * workers_cpu / tasks,
        "received_mb": got / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--payload-kb", type=float, nargs="+", default=[0, 60])
    args = parser.parse_args()
    import distributed

    start = time.perf_counter()
    cluster = distributed.LocalCluster(
        n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=50
    )
    client = distributed.Client(cluster, set_as_default=False)
    started = time.perf_counter() - start
    try:
        measure(client, 50, 0)  # warm the workers up
        rows = [measure(client, args.tasks, int(kb * 1024)) for kb in args.payload_kb]
    finally:
        client.close()
        cluster.close()
    print(
        json.dumps(
            {"cluster_start_s": started, "workers": args.workers, "load_1min": os.getloadavg()[0], "rows": rows},
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
