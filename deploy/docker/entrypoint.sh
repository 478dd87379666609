#!/bin/sh
# The container's entrypoint: kilnd listening on every interface, its flags from the
# environment (KILN_* below, the way Kubernetes ConfigMaps and compose files set them) and then
# the container's arguments. `exec`, so kilnd is PID 1's process and receives SIGTERM itself.
set -eu
KILND="${KILN_KILND_BINARY:-/usr/local/bin/kilnd}"
set -- \
  "--listen=${KILN_LISTEN:-0.0.0.0:50051}" \
  "--metrics-listen=${KILN_METRICS_LISTEN:-0.0.0.0:9464}" \
  ${KILN_WORKERS:+"--workers=$KILN_WORKERS"} \
  ${KILN_QUEUE_DEPTH:+"--queue-depth=$KILN_QUEUE_DEPTH"} \
  ${KILN_MAX_COMPILE_BYTES:+"--max-compile-bytes=$KILN_MAX_COMPILE_BYTES"} \
  ${KILN_GRACE_PERIOD:+"--grace-period=$KILN_GRACE_PERIOD"} \
  ${KILN_CACHE_REDIS:+"--cache-redis=$KILN_CACHE_REDIS"} \
  ${KILN_AUTH_TOKEN_FILE:+"--auth-token-file=$KILN_AUTH_TOKEN_FILE"} \
  ${KILN_TLS_CERT:+"--tls-cert=$KILN_TLS_CERT"} \
  ${KILN_TLS_KEY:+"--tls-key=$KILN_TLS_KEY"} \
  "$@"
exec "$KILND" "$@"
