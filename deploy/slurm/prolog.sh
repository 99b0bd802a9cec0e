#!/bin/sh
# Slurm Prolog (slurm.conf: Prolog=/usr/local/sbin/topoaudit-prolog.sh): before a job starts on this node,
# the health check from its cache (a fresh probe only when the cached result is older than --max-age).
# A failing node is drained with its "topoaudit: ..." reason, so it takes no new jobs. By default this
# job still runs; set TOPOAUDIT_PROLOG_FAIL_JOB=1 to fail the prolog instead, which makes Slurm requeue
# the job elsewhere -- and replace the drain reason with its own "Prolog error", which topoaudit then
# leaves alone (an operator resumes the node).
PATH=/usr/local/bin:/usr/bin:/bin:$PATH
TOPOAUDIT_HEALTHCHECK_ARGS=""
TOPOAUDIT_PROLOG_FAIL_JOB=0
if [ -r /etc/default/topoaudit ]; then
  . /etc/default/topoaudit
fi
# shellcheck disable=SC2086
timeout 50 "${TOPOAUDIT:-topoaudit}" healthcheck --max-age 3600 $TOPOAUDIT_HEALTHCHECK_ARGS
code=$?
if [ "$code" -ne 0 ] && [ "$TOPOAUDIT_PROLOG_FAIL_JOB" = 1 ]; then
  exit 1
fi
exit 0
