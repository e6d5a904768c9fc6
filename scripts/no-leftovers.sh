#!/usr/bin/env bash
# `bash scripts/no-leftovers.sh`: fails when a container or swarm service of the platform's is still there.
# Every platform that a test run, a bench or a drill starts removes what it started (#61). npm test runs this
# as its last stage, and .ci/run again after the drills.
set -euo pipefail
left=$(docker ps -a --filter 'name=^opsflow' --format '{{.Names}} ({{.Image}}, {{.Status}})')
services=$(docker service ls --filter 'name=opsflow' --format '{{.Name}} (service)' 2>/dev/null || true)
if [ -n "$left$services" ]; then
  echo "left behind by the platform:"
  printf '%s\n' "$left" "$services" | sed '/^$/d'
  exit 1
fi
echo "no container or service of the platform's is left"
