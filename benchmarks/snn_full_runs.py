"""Full Yin-Yang training runs of the spiking-neurons topic, logged epoch by epoch.

``whylab run spiking-neurons yin-yang-bptt --epochs 100 --train 5000 --test 1000`` (and
``yin-yang-eventprop``) trains the same networks, but prints only when the run ends; on a
2-core machine shared with other work a full run takes hours. This script trains the very
same model, data, seeds and loop as the experiment and appends every epoch's test
accuracy to a JSON-lines file as it goes, so a run cut short still leaves its curve::

    nice python benchmarks/snn_full_runs.py bptt --epochs 100 --hidden 100
    nice python benchmarks/snn_full_runs.py eventprop --epochs 40 --hidden 200

Each line: run, learning-rate schedule, epoch, test accuracy, mean training loss, wall and
CPU seconds so far.
``--minutes`` stops a run after the epoch that crosses that much wall-clock time;
``summary`` prints the log as a table (last, best and when, first epoch at 95%, lowest of
the last 10 epochs, CPU time per epoch)::

    python benchmarks/snn_full_runs.py summary
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from whylab.snn import eventprop, surrogate, training, yinyang

DEFAULT_LOG = Path(__file__).with_name("snn_full_runs.jsonl")


class StopRun(Exception):
    """Raised from the epoch callback once the run's wall-clock budget is spent."""


def _logger(args, run: str, schedule: str):
    wall0, cpu0 = time.perf_counter(), time.process_time()

    def log(epoch: int, history: training.History) -> None:
        line = {"run": run, "seed": args.seed, "hidden": args.hidden, "train": args.train,
                "test": args.test, "epochs": args.epochs, "schedule": schedule, "epoch": epoch,
                "test_accuracy": history.test_accuracy[-1],
                "train_loss": history.train_loss[-1],
                "wall_s": round(time.perf_counter() - wall0, 1),
                "cpu_s": round(time.process_time() - cpu0, 1)}
        if epoch == 1:
            line["initial_test_accuracy"] = history.test_accuracy[0]
        with open(args.log, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")
        print(f"{run} epoch {epoch}/{args.epochs}: test {line['test_accuracy']:.2%} "
              f"({line['wall_s']:.0f} s)", flush=True)
        if args.minutes and line["wall_s"] >= 60 * args.minutes:
            raise StopRun

    return log


def run_bptt(args) -> None:
    """The yin-yang-bptt experiment's SNN: sigmoid surrogate (slope 5), Adam, lr decay."""
    from whylab.topics.spiking_neurons import learning

    train_set = yinyang.yin_yang(args.train, seed=42 + args.seed)
    test_set = yinyang.yin_yang(args.test, seed=40)
    model = learning.spiking_model(args.hidden, args.seed,
                                   surrogate.spike_function("sigmoid", 5.0))
    training.train(model, learning.encode_spikes, train_set, test_set, epochs=args.epochs,
                   batch_size=32, lr=learning.LR, lr_min=learning.LR_MIN, seed=args.seed,
                   on_epoch=_logger(args, "bptt",
                                    f"cosine {learning.LR:g} to {learning.LR_MIN:g}"))


def run_eventprop(args) -> None:
    """The yin-yang-eventprop experiment: the paper's network and constants, in ms."""
    network = eventprop.yin_yang_network(args.hidden, args.seed)
    train_set = yinyang.yin_yang(args.train, seed=42 + args.seed)
    test_set = yinyang.yin_yang(args.test, seed=40)
    training.train_event_network(network, eventprop.yin_yang_encode, train_set, test_set,
                                 epochs=args.epochs, lr=eventprop.YIN_YANG_LR,
                                 lr_decay=eventprop.YIN_YANG_LR_DECAY, seed=args.seed,
                                 on_epoch=_logger(args, "eventprop",
                                                  f"x{eventprop.YIN_YANG_LR_DECAY:g} per epoch"))


def summary(log: Path, bound: float = 0.95) -> str:
    """A markdown table of every (run, schedule, seed, hidden, train) in the log.

    Per run: accuracy before training, at the last epoch, the best (and when), the first
    epoch at or above ``bound``, and the lowest of the last 10 epochs (how steady the end is).
    """
    runs: dict[tuple, list[dict]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        key = (entry["run"], entry["schedule"], entry["seed"], entry["hidden"], entry["train"],
               entry["test"])
        runs.setdefault(key, []).append(entry)
    rows = [f"| run | lr schedule | seed | hidden | train / test | epochs done | before | last "
            f"| best (epoch) | first ≥ {bound:.0%} | min of last 10 | CPU s / epoch |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (run, schedule, seed, hidden, train, test), epochs in runs.items():
        epochs.sort(key=lambda e: e["epoch"])
        last = epochs[-1]
        best = max(epochs, key=lambda e: e["test_accuracy"])
        start = epochs[0].get("initial_test_accuracy", float("nan"))
        first = next((e["epoch"] for e in epochs if e["test_accuracy"] >= bound), "—")
        tail = min(e["test_accuracy"] for e in epochs[-10:])
        rows.append(f"| {run} | {schedule} | {seed} | {hidden} | {train} / {test} | "
                    f"{last['epoch']} of {last['epochs']} | {start:.1%} | "
                    f"{last['test_accuracy']:.1%} | {best['test_accuracy']:.1%} ({best['epoch']}) "
                    f"| {first} | {tail:.1%} | {last['cpu_s'] / last['epoch']:.1f} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", choices=["bptt", "eventprop", "summary"])
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--train", type=int, default=5000)
    parser.add_argument("--test", type=int, default=1000)
    parser.add_argument("--hidden", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--minutes", type=float, default=0.0,
                        help="stop after the epoch that passes this wall-clock time (0: never)")
    parser.add_argument("--log", type=Path, default=DEFAULT_LOG)
    args = parser.parse_args()
    if args.run == "summary":
        print(summary(args.log))
        return
    try:
        (run_bptt if args.run == "bptt" else run_eventprop)(args)
    except StopRun:
        print(f"stopped after {args.minutes:g} minutes", flush=True)


if __name__ == "__main__":
    main()
