"""What the epoch lines of a Ray Train run cost (issue 16, item 4).

A compiled Train script sends each report from Train's controller (an asyncio actor on the driver's node) to the
driver through a `ray.util.queue.Queue` (an actor of its own, num_cpus=0) that a driver thread drains. This
measures, on a local Ray of 2 CPUs:

  start-up    Queue(...) until the queue actor answers (the driver pays it once, while Train starts its workers)
  per report  the controller's side: put_nowait.remote + ray.wait, from inside an asyncio actor as the
              controller calls it (the time its event loop is held)
  delivery    from that put to the driver thread's queue.get() returning the item

    .venv/bin/python bench/progress_channel.py [--reports 200]
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=int, default=200)
    args = parser.parse_args()

    import ray
    import ray.util.queue

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        controller = Controller.remote()
        ray.get(controller.ping.remote())  # the stand-in controller is up before timing starts
        starts = []
        for _ in range(3):
            began = time.perf_counter()
            queue = ray.util.queue.Queue(actor_options={"num_cpus": 0})
            queue.size()  # answered: the actor is up
            starts.append(time.perf_counter() - began)
            queue.shutdown()
        queue = ray.util.queue.Queue(actor_options={"num_cpus": 0})
        queue.size()
        arrived = {}

        def drain():
            while (item := queue.get()) is not None:
                arrived[item] = time.perf_counter()

        thread = threading.Thread(target=drain, daemon=True)
        thread.start()
        sent = ray.get(controller.report.remote(queue, args.reports))  # [(index, sent_at, held_seconds)]
        queue.put(None)
        thread.join(timeout=30)
        held = [h * 1000 for _, _, h in sent]
        delivery = [(arrived[i] - at) * 1000 for i, at, _ in sent if i in arrived]
        each = ", ".join(f"{s * 1000:.0f}" for s in starts)
        print(f"start-up   {statistics.median(starts) * 1000:7.1f} ms (median of 3; {each} ms)")
        print(f"per report {statistics.median(held):7.2f} ms held in the controller (median; p95 {q95(held):.2f} ms)")
        print(f"delivery   {statistics.median(delivery):7.2f} ms to the driver (median; p95 {q95(delivery):.2f} ms)")
        print(
            f"           {len(delivery)}/{args.reports} reports arrived, in order: {sorted(arrived) == list(arrived)}"
        )
    finally:
        ray.shutdown()


def q95(values):
    return sorted(values)[int(len(values) * 0.95)]


def _controller():
    import ray

    @ray.remote(num_cpus=0)
    class Controller:
        """Calls as Ray Train's controller calls a UserCallback: synchronously, inside its asyncio event loop."""

        async def ping(self):
            return True

        async def report(self, queue, count):
            sent = []
            for index in range(count):
                began = time.perf_counter()
                ray.wait([queue.actor.put_nowait.remote(index)], timeout=10)
                sent.append((index, began, time.perf_counter() - began))
            return sent

    return Controller


if __name__ == "__main__":
    Controller = _controller()
    main()
