#!/bin/sh
# Slurm Epilog (slurm.conf: Epilog=/usr/local/sbin/topoaudit-epilog.sh): after a job, probe this node again
# (--max-age 0) so a GPU or NVLink lost during the job drains the node before the next job, and the
# cache the health check and prolog read is fresh. The epilog never fails: the drain says what is wrong.
PATH=/usr/local/bin:/usr/bin:/bin:$PATH
TOPOAUDIT_HEALTHCHECK_ARGS=""
if [ -r /etc/default/topoaudit ]; then
  . /etc/default/topoaudit
fi
# shellcheck disable=SC2086
timeout 50 "${TOPOAUDIT:-topoaudit}" healthcheck --max-age 0 $TOPOAUDIT_HEALTHCHECK_ARGS
exit 0
