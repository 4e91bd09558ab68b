"""``python -m bench.failover``: what a client sees when the primary database is lost
(CONTRACT.md 16, docs/scaling.md "High availability").

Makes the test's Patroni cluster on loopback (tests/failover/cluster.py: one etcd, three
PostgreSQL members under Debian's Patroni, synchronous mode; installed with apt when
root) and runs its scenarios (tests/failover/scenarios.py): per round a fresh database,
``runtime-store serve`` on the multi-host URL, four writers living run lifecycles over
HTTP with the real ``HttpStore`` (starts, appends, batches, terminals, exact retries; a
host creating and ending sessions; a reader paging; a live tail and a wait across the
blow; a webhook subscription), and one blow on the leader: its PostgreSQL SIGKILLed
(``kill``), its Patroni stopped cleanly (``stop``), or its Patroni and PostgreSQL frozen
with SIGSTOP and thawed after the failover (``freeze``).

Per scenario it prints, over ``--rounds`` rounds: writes acknowledged, lost (must be 0)
and duplicated (must be 0), 503s answered, the unavailable window (the longest time without
an acknowledged write after the blow: for a kill or a freeze, the blow to the first write
acknowledged after it; median and max) next to Patroni's own failover time
(the blow to another member accepting writes), and the time to full throughput again
(the end of the first second after the blow with 80 % of the writes per second before
it). Each round's line also says how many records came in batches, what the live tail
yielded, how soon the wait answered the terminal write, and the webhook redeliveries;
``problems`` counts any broken promise (a lost or repeated record, a tail that differs
from a paged read, a webhook out of order). On a 2-core machine the cluster, the service
and the clients share the cores.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from tests.failover.cluster import missing_tools, patroni_cluster
from tests.failover.scenarios import BLOWS, Outcome, run_scenario, summary


def _row(blow: str, rounds: list[Outcome]) -> str:
    window = summary(rounds, lambda r: r.window)
    patroni = summary(rounds, lambda r: r.patroni_failover)
    full = summary(rounds, lambda r: r.full_throughput)
    longest = max(r.longest_answer for r in rounds)
    return (
        f"| {blow} | {sum(r.acknowledged for r in rounds)} | {sum(r.lost for r in rounds)} | "
        f"{sum(r.duplicated for r in rounds)} | {sum(r.unavailable for r in rounds)} | "
        f"{window[0]:.1f} / {window[1]:.1f} | {patroni[0]:.1f} / {patroni[1]:.1f} | "
        f"{full[0]:.1f} / {full[1]:.1f} | {longest:.1f} | "
        f"{sum(len(r.problems) for r in rounds)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.failover", description=__doc__)
    parser.add_argument("--rounds", type=int, default=3, help="rounds per scenario")
    parser.add_argument(
        "--scenarios", default=",".join(BLOWS), help=f"comma-separated, of {', '.join(BLOWS)}"
    )
    args = parser.parse_args()
    reason = missing_tools()
    if reason is not None:
        raise SystemExit(f"no Patroni cluster: {reason}")
    log_dir = Path(tempfile.mkdtemp(prefix="rs-bench-failover-"))
    results: dict[str, list[Outcome]] = {}
    with patroni_cluster() as cluster:
        for blow in args.scenarios.split(","):
            for round_ in range(args.rounds):
                outcome = run_scenario(cluster, blow, seed=100 + round_, log_dir=log_dir)
                print(outcome.line(), flush=True)
                for problem in outcome.problems[:5]:
                    print(f"  problem: {problem}", flush=True)
                results.setdefault(blow, []).append(outcome)
    print()
    print(
        "| blow | writes acknowledged | lost | duplicated | 503s | unavailable window "
        "(median / max, s) | Patroni's failover (median / max, s) | full throughput again "
        "(median / max, s) | longest answer meanwhile (s) | problems |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for blow, rounds in results.items():
        print(_row(blow, rounds))
    print(f"\nservice logs: {log_dir}")


if __name__ == "__main__":
    main()
