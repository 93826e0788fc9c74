#!/bin/bash
# One shard of a benchmark as one task of a Slurm array job; the merge runs as a job that depends on
# the whole array. Submit from the repository root (docs/benchmarks-cluster.md):
#
#   N=3 RUN=runs/locomo-retrieval BENCH="locomo-retrieval --data ../shared/data/locomo/locomo_dev.json"
#   JOB=$(sbatch --parsable --array=0-$((N-1)) --export=ALL,RUN="$RUN",BENCH="$BENCH" scripts/cluster/bench-slurm.sh)
#   sbatch --dependency=afterok:$JOB --wrap ".venv/bin/python -m core bench-merge $RUN/shard* --out $RUN/merged"
#
# Every task sees the repository, its .venv and ../shared/data at the same paths (a shared file
# system); the embedding cache stays on the node's local disk (SQLite locks are unreliable on NFS).
#SBATCH --job-name=bench-shard
#SBATCH --cpus-per-task=4
#SBATCH --mem=16G
#SBATCH --time=08:00:00
#SBATCH --output=slurm-bench-%A_%a.out
set -euo pipefail

: "${SLURM_ARRAY_TASK_ID:?submit with sbatch --array=0-(N-1)}"
: "${RUN:?set RUN, the run folder (shards go to RUN/shardK)}"
: "${BENCH:?set BENCH, the benchmark name and its options, e.g. locomo-retrieval --data FILE}"
N=${SLURM_ARRAY_TASK_COUNT}
K=${SLURM_ARRAY_TASK_ID}

export HF_HUB_OFFLINE=1 OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1}
# shellcheck disable=SC2086  # BENCH is a list of arguments
.venv/bin/python -m core bench $BENCH --shard "$K/$N" --out "$RUN/shard$K" --quiet \
    ${EMBEDDING_CACHE:+--embedding-cache "$EMBEDDING_CACHE"}
