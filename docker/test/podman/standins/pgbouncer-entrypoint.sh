#!/bin/sh
# The part of edoburu/pgbouncer's entry point the compose file relies on: DB_HOST, DB_PORT,
# DB_NAME, DB_USER and DB_PASSWORD name the one database it pools (the password is written to
# the userlist in clear for AUTH_TYPE plain or scram-sha-256, as md5 otherwise), and the
# pgbouncer.ini settings come from their upper-case variables.
set -eu
dir=/etc/pgbouncer
: "${DB_HOST:?set DB_HOST}" "${DB_USER:=postgres}" "${AUTH_TYPE:=md5}"
if [ -n "${DB_PASSWORD:-}" ]; then
  case "$AUTH_TYPE" in
    plain | scram-sha-256) secret="$DB_PASSWORD" ;;
    *) secret="md5$(printf '%s%s' "$DB_PASSWORD" "$DB_USER" | md5sum | cut -d' ' -f1)" ;;
  esac
  printf '"%s" "%s"\n' "$DB_USER" "$secret" >"$dir/userlist.txt"
fi
cat >"$dir/pgbouncer.ini" <<INI
[databases]
${DB_NAME:-*} = host=$DB_HOST port=${DB_PORT:-5432} auth_user=$DB_USER
[pgbouncer]
listen_addr = ${LISTEN_ADDR:-0.0.0.0}
listen_port = ${LISTEN_PORT:-5432}
unix_socket_dir =
auth_file = $dir/userlist.txt
auth_type = $AUTH_TYPE
pool_mode = ${POOL_MODE:-session}
default_pool_size = ${DEFAULT_POOL_SIZE:-20}
max_client_conn = ${MAX_CLIENT_CONN:-100}
ignore_startup_parameters = ${IGNORE_STARTUP_PARAMETERS:-extra_float_digits}
admin_users = ${ADMIN_USERS:-postgres}
INI
exec "$@"
