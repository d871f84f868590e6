# shellcheck shell=bash
# Sourced by .ci/run: starts PostgreSQL (from Debian, throwaway data
# directory, 127.0.0.1 on a free port) and FerretDB v1.24.2 on it
# (tools/ferretdb, 127.0.0.1 on a free port), then exports
# CRONSHEET_TEST_MONGO_URI for store/mongo's and server's tests.
# Both stop through cleanup_hooks. See README.md, "Development".
#
# Needs: apt_install, cleanup_hooks (from .ci/run), go, root (initdb runs
# as the postgres user).

ferretdb_setup() {
  local pgbin dir pgport fport bin key cache fpid i stop

  apt_install postgresql
  pgbin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
  [ -x "$pgbin/initdb" ] || { echo "20-ferretdb: no initdb under /usr/lib/postgresql" >&2; return 1; }

  # ferretdb_free_port: a loopback TCP port nobody listens on right now.
  ferretdb_free_port() {
    local p
    while :; do
      # Below the kernel's ephemeral range (32768+): a port a client
      # socket holds there cannot be seen by this probe, yet binds fail.
      p=$((20000 + RANDOM % 12000))
      if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
    done
  }
  # as_postgres CMD: runs CMD as the postgres user (initdb refuses root).
  as_postgres() {
    if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$1"; else sh -c "$1"; fi
  }

  dir="$(mktemp -d /tmp/cronsheet-pg.XXXXXX)"
  if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$dir"; fi
  pgport="$(ferretdb_free_port)"
  as_postgres "'$pgbin/initdb' -D '$dir/data' -U postgres --auth=trust -E UTF8 >'$dir/initdb.log' 2>&1" ||
    { cat "$dir/initdb.log" >&2; return 1; }
  as_postgres "'$pgbin/pg_ctl' -D '$dir/data' -w -l '$dir/postgres.log' \
    -o \"-p $pgport -k '$dir' -c listen_addresses=127.0.0.1 -c fsync=off\" start" >/dev/null ||
    { cat "$dir/postgres.log" >&2; return 1; }
  stop="'$pgbin/pg_ctl' -D '$dir/data' stop -m fast >/dev/null"
  if [ "$(id -u)" = 0 ]; then stop="su postgres -s /bin/sh -c \"$stop\""; fi
  cleanup_hooks+=("$stop; rm -rf '$dir'")
  as_postgres "'$pgbin/createdb' -h 127.0.0.1 -p $pgport -U postgres ferretdb"

  # Build tools/ferretdb once per source version (about 2 minutes cold).
  key="$(cat tools/ferretdb/go.mod tools/ferretdb/go.sum tools/ferretdb/*.go | sha256sum | cut -c1-16)"
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/cronsheet"
  bin="$cache/ferretdb-$key"
  # The build goes to a directory of its own and is renamed into place:
  # two runs building the same key at once each move a complete binary.
  if [ ! -x "$bin" ]; then
    mkdir -p "$cache"
    echo "20-ferretdb: building tools/ferretdb"
    local tmp
    tmp="$(mktemp -d "$bin.XXXXXX")"
    (cd tools/ferretdb && go build -trimpath -o "$tmp/ferretdb" .) && mv -f "$tmp/ferretdb" "$bin"
    rm -rf "$tmp"
  fi

  # Start it, on another port when the chosen one was taken meanwhile.
  local attempt started=
  for attempt in 1 2 3; do
    fport="$(ferretdb_free_port)"
    "$bin" -listen "127.0.0.1:$fport" -postgresql-url "postgres://postgres@127.0.0.1:$pgport/ferretdb" \
      >"$dir/ferretdb.log" 2>&1 &
    fpid=$!
    for ((i = 0; i < 150; i++)); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$fport") 2>/dev/null; then started=1; break; fi
      if ! kill -0 "$fpid" 2>/dev/null; then break; fi
      sleep 0.2
    done
    if [ -n "$started" ]; then break; fi
    kill "$fpid" 2>/dev/null; wait "$fpid" 2>/dev/null || true
    echo "20-ferretdb: attempt $attempt: FerretDB did not start on 127.0.0.1:$fport" >&2
    cat "$dir/ferretdb.log" >&2
  done
  [ -n "$started" ] || return 1
  cleanup_hooks+=("kill $fpid 2>/dev/null; wait $fpid 2>/dev/null || true")
  export CRONSHEET_TEST_MONGO_URI="mongodb://127.0.0.1:$fport/"
  echo "20-ferretdb: PostgreSQL on 127.0.0.1:$pgport, FerretDB on $CRONSHEET_TEST_MONGO_URI"
}

ferretdb_setup
unset -f ferretdb_setup ferretdb_free_port as_postgres
