#!/bin/sh
# One Temporal server node: every service, its membership address the container's own.
set -eu
TEMPORAL_BROADCAST_ADDRESS="$(hostname -i | cut -d' ' -f1)"
export TEMPORAL_BROADCAST_ADDRESS
exec temporal-server --config-file /etc/temporal/server.yaml start \
  --service frontend --service internal-frontend --service history --service matching --service worker
