#!/bin/sh
# As the official image's: a first argument that is a flag is Envoy's; Envoy drops root for the user envoy
# unless ENVOY_UID says 0.
set -e
if [ "${1#-}" != "$1" ]; then set -- envoy "$@"; fi
if [ "$1" = envoy ] && [ "$(id -u)" = 0 ] && [ "${ENVOY_UID:-101}" != 0 ]; then
  exec setpriv --reuid="${ENVOY_UID:-101}" --regid="${ENVOY_GID:-101}" --clear-groups "$@"
fi
exec "$@"
