"""``okl-tune``: a hyperparameter study on a prefix of the stream, then the report runs on the rest (okl.tune).

Examples::

    okl-tune dataset=casp learner=pkawv_taylor M=2 'sigma=loguniform(0.1,10)' 'lam=loguniform(1e-4,10)' \\
        --prefix 10000 --trials 30 --seeds 3
    okl-tune ... --pruner none                  # every trial plays to its end

Distributions: loguniform(low,high), uniform(low,high), int(low,high), choice(a,b,...); every other argument is
an okl-run override. The same command again continues the study. Exit status 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from okl.cli import command
from okl.system import pin_blas_threads

PROG = "okl-tune"


@command
def main(argv: list[str] | None = None) -> None:
    pin_blas_threads()
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0].split(": ", 1)[1])
    parser.add_argument("arguments", nargs="*", metavar="KEY=VALUE", help="okl-run overrides and key=distribution(...)")
    parser.add_argument("--prefix", type=int, required=True, help="rounds the study sees; the report plays the rest")
    parser.add_argument("--trials", type=int, default=30, help="trials the study holds when done (default 30)")
    parser.add_argument("--seeds", type=int, default=1, help="seeds per trial, their losses averaged (default 1)")
    parser.add_argument("--pruner", choices=("median", "none"), default="median", help="stop bad trials early")
    parser.add_argument("--seed", type=int, default=0, help="the sampler's seed")
    parser.add_argument("--study", help="the study's name (default: derived from the command)")
    parser.add_argument("--root", type=Path, help="the results root (default: $OKL_RESULTS, else results/)")
    args = parser.parse_intermixed_args(argv)  # overrides after the options too (okl-run's habit)

    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from okl import results, tune
    from okl.cli.run import describe
    from okl.errors import OklError

    try:
        if min(args.prefix, args.trials, args.seeds) < 1:
            raise OklError("--prefix, --trials and --seeds take a positive number")
        fixed, space = tune.parse_space(args.arguments)
        root = args.root or results.default_root()
        fixed = [*fixed, f"sink.root='{root}'"]
        study = tune.Study(
            fixed, space, args.prefix, args.trials, args.seeds, args.pruner, args.seed, args.study, Path(root)
        )
        tune.run(study, say=lambda line: print(line, flush=True))
    except (OklError, HydraException, OmegaConfBaseException) as exc:  # an override Hydra refuses, as okl-run says it
        print(f"{PROG}: error: {describe(exc)}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:  # the trial that played is failed, not scored on the rounds it played
        print(f"{PROG}: interrupted; the study keeps its ended trials: the same command continues it", file=sys.stderr)
        sys.exit(130)
