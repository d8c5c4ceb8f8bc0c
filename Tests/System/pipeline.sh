#!/usr/bin/env bash
# A client's pipelined changes share one save, every guarantee kept (issue 24): replies in
# order, batches all or nothing, a save failing half-way through a pipeline, fsyncs per
# pipeline with --sync; and reads answered while clients flood changes (issue 19, item 4).
# The work is done by Tests/System/pipeline.py; this wrapper bounds its time.
#
#   Tests/System/pipeline.sh                  # binaries from .build/debug
#   Tests/System/pipeline.sh failure fsyncs   # some parts
#
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export BUILD_DIR="${BUILD_DIR:-.build/debug}"
source Tests/System/lib/bounded.sh
run_bounded "${PIPELINE_TIMEOUT:-180}" pipeline.py python3 Tests/System/pipeline.py "$@"
