#!/usr/bin/env python3
"""Interleaved start-up benchmark: median wall time of each command.

Each round runs every command once, in turn, with posix_spawn (stdout to
/dev/null), so drift of the machine between minutes hits all commands alike;
hyperfine runs one command's batch after another's. The first 20 rounds are
warm-up. Prints each command's median and its difference from the first
command's, with the noise: the rounds are cut into SPAWN_BLOCKS blocks
(default 5), and the lowest and highest of that difference within one block
follow in brackets.

Usage: bench-spawn.py [--bar I J LIMIT_MS] ROUNDS 'CMD ARGS...' ['VAR=value CMD ARGS...' ...]
A command may start with VAR=value words: that command's environment is this
script's with those set. With --bar, also prints the difference of command J
over command I (0-based) with its block range, and exits 1 if it is above
LIMIT_MS. Run it as root under `chrt -f 50` for
steadier numbers.
"""
import os
import statistics
import sys
import time


def parse(spec):
    words, env = spec.split(), dict(os.environ)
    while words and "=" in words[0]:
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    return words, env


def difference(times, i, j, blocks):
    """Median of command j minus median of command i, over all rounds and
    the lowest and highest of the same over each block of rounds."""
    med = statistics.median
    size = max(1, len(times[i]) // blocks)
    parts = [
        med(times[j][k : k + size]) - med(times[i][k : k + size])
        for k in range(0, size * blocks, size)
    ]
    return med(times[j]) - med(times[i]), min(parts), max(parts)


def main():
    args = sys.argv[1:]
    bar = None
    if args[:1] == ["--bar"]:
        bar = (int(args[1]), int(args[2]), float(args[3]))
        args = args[4:]
    if len(args) < 2:
        sys.exit(__doc__)
    rounds = int(args[0])
    specs = args[1:]
    blocks = max(1, int(os.environ.get("SPAWN_BLOCKS", "5")))
    commands = [parse(s) for s in specs]
    devnull = os.open(os.devnull, os.O_WRONLY)
    times = [[] for _ in commands]
    for i in range(rounds + 20):
        for j, (argv, env) in enumerate(commands):
            start = time.perf_counter()
            pid = os.posix_spawn(
                argv[0], argv, env, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)]
            )
            os.waitpid(pid, 0)
            if i >= 20:
                times[j].append(time.perf_counter() - start)
    ms = 1e3
    for j, spec in enumerate(specs):
        m = statistics.median(times[j])
        if j == 0:
            print(f"{m * ms:7.3f} ms               {spec}")
            continue
        d, lo, hi = difference(times, 0, j, blocks)
        print(f"{m * ms:7.3f} ms ({d * ms:+.3f} ms) [{lo * ms:+.3f} {hi * ms:+.3f}]  {spec}")
    if bar:
        i, j, limit = bar
        d, lo, hi = difference(times, i, j, blocks)
        verdict = "met" if d * ms <= limit else "NOT met"
        print(
            f"bar: command {j + 1} over command {i + 1}: {d * ms:+.3f} ms "
            f"(blocks {lo * ms:+.3f} to {hi * ms:+.3f}), limit +{limit:.3f} ms: {verdict}"
        )
        sys.exit(0 if d * ms <= limit else 1)


if __name__ == "__main__":
    main()
