#!/bin/sh
# The schema job: creates the two databases when missing and sets up or upgrades their schemas, as
# scripts/platform/temporal-cluster.ts does for `npm start` (the SQL tool is idempotent).
set -eu
export SQL_PASSWORD="$TEMPORAL_SQL_PASSWORD"
for pair in "${TEMPORAL_DB:-temporal}:temporal" "${TEMPORAL_VISIBILITY_DB:-temporal_visibility}:visibility"; do
  db="${pair%%:*}"; schema="${pair##*:}"
  temporal-sql-tool --plugin postgres12 --ep "$TEMPORAL_SQL_HOST" -p "$TEMPORAL_SQL_PORT" -u "$TEMPORAL_SQL_USER" --db "$db" create-database 2>/dev/null || true
  temporal-sql-tool --plugin postgres12 --ep "$TEMPORAL_SQL_HOST" -p "$TEMPORAL_SQL_PORT" -u "$TEMPORAL_SQL_USER" --db "$db" setup-schema -v 0.0
  temporal-sql-tool --plugin postgres12 --ep "$TEMPORAL_SQL_HOST" -p "$TEMPORAL_SQL_PORT" -u "$TEMPORAL_SQL_USER" --db "$db" update-schema -d "/etc/temporal/schema/$schema/versioned"
done
