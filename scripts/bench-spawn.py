#!/usr/bin/env python3
"""Interleaved start-up benchmark: median wall time of each command.

Each round runs every command once, in turn, with posix_spawn (stdout to
/dev/null), so drift of the machine between minutes hits all commands alike;
hyperfine runs one command's batch after another's. The first 20 rounds are
warm-up. Prints each median and its difference from the first command's.

Usage: bench-spawn.py ROUNDS 'CMD ARGS...' ['VAR=value CMD ARGS...' ...]
A command may start with VAR=value words: that command's environment is this
script's with those set. Run it as root under `chrt -f 50` for steadier numbers.
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


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rounds = int(sys.argv[1])
    specs = sys.argv[2:]
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
    base = statistics.median(times[0])
    for spec, t in zip(specs, times):
        m = statistics.median(t)
        print(f"{m * 1e3:7.3f} ms ({(m - base) * 1e3:+.3f} ms)  {spec}")


if __name__ == "__main__":
    main()
