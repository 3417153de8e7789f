#!/usr/bin/env bash
# Scale-out test: restmcp replicas behind nginx, driven by real MCP clients.
#
#   RESTMCP_BIN=path/to/restmcp bash tests/scale-out/run.sh
#
# Starts four `restmcp serve` replicas on loopback, each serving the shipped Petstore spec in
# mock mode (no upstream): A and B stateless ([server] sessions = false), C and D keeping
# sessions (the default). One nginx, started from a config generated in a temp dir, balances:
#
#   stateless  round robin over A, B
#   rr         round robin over C, D
#   ip-hash    hash $remote_addr consistent over C, D
#   sid-hash   hash $http_mcp_session_id consistent over C, D
#
# scale_client.py then runs the official MCP Python SDK and plain 2026-07-28 JSON-RPC POSTs
# through them and reads nginx's access logs to see which replica served each request (see
# its docstring for the checks). Everything stays on 127.0.0.1 and stops on exit.
#
# RESTMCP_BIN defaults to target/debug/restmcp. nginx is installed from the Debian packages
# when not on PATH (needs root and apt-get). The Python SDK is installed into the venv the
# interop test uses (target/interop/python-venv, mcp 2.3.0) when missing.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${RESTMCP_BIN:-$root/target/debug/restmcp}"
[[ "$bin" == /* ]] || bin="$PWD/$bin"
cd "$root"

sdk_version="2.3.0"
venv="target/interop/python-venv"
python="${PYTHON:-python3}"
spec="$root/specs/petstore.yaml"
started=$SECONDS

say() { echo "scale-out: $*"; }
die() { echo "scale-out: $*" >&2; exit 1; }
# install_from_debian (uses say and die)
source "$root/tests/lib/apt.sh"

[[ -x "$bin" ]] || die "restmcp binary not found at $bin (build it, or set RESTMCP_BIN)"

# --- nginx ---------------------------------------------------------------------------------

find_nginx() {
    command -v nginx || { [[ -x /usr/sbin/nginx ]] && echo /usr/sbin/nginx; }
}

# nginx-light (bookworm) or nginx (later releases).
nginx_bin="$(find_nginx)" || { install_from_debian nginx nginx-light nginx; nginx_bin="$(find_nginx)" || die "nginx still not found"; }

# --- the Python SDK ------------------------------------------------------------------------

if [[ ! -x "$venv/bin/python" ]]; then
    mkdir -p "$(dirname "$venv")"
    "$python" -m venv "$venv"
fi
# A no-op (and no download) when the venv already has this version.
"$venv/bin/python" -m pip install -q --disable-pip-version-check "mcp==$sdk_version"

# --- processes, cleaned up on exit ---------------------------------------------------------

tmp="$(mktemp -d "${TMPDIR:-/tmp}/restmcp-scale.XXXXXX")"
chmod 755 "$tmp" # nginx workers drop root privileges
pids=()
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
    local status=$?
    local pid
    for pid in "${pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    if [[ $status -ne 0 && -d $tmp ]]; then
        for f in "$tmp"/*.log "$tmp"/nginx/error.log; do
            [[ -s $f ]] && { echo "--- $f (last lines)"; tail -n 20 "$f"; }
        done >&2
    fi
    rm -rf "$tmp"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Eight free loopback ports: four replicas, four balancer servers.
read -r -a ports < <("$python" - <<'EOF'
import socket
socks = [socket.socket() for _ in range(8)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks:
    s.close()
EOF
)
port_a=${ports[0]} port_b=${ports[1]} port_c=${ports[2]} port_d=${ports[3]}

# GET http://127.0.0.1:PORT/readyz answers 200 (tools loaded), with bash alone.
healthy() (
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf 'GET /readyz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
    line=""
    IFS= read -r -t 2 line <&3 || true
    [[ $line == "HTTP/1."?" 200"* ]]
)

wait_healthy() { # name port pid
    local deadline=$((SECONDS + 20))
    until healthy "$2" 2>/dev/null; do
        kill -0 "$3" 2>/dev/null || die "$1 exited early"
        ((SECONDS < deadline)) || die "$1 not answering on 127.0.0.1:$2 after 20 s"
        sleep 0.1
    done
}

# restmcp reads every RESTMCP_* variable as configuration (and refuses unknown keys), so the
# runner's own RESTMCP_BIN must not reach it.
clean_env=()
while IFS= read -r name; do
    [[ $name == RESTMCP_* ]] && clean_env+=(-u "$name")
done < <(compgen -e)

start_replica() { # name port sessions
    cat >"$tmp/$1.toml" <<EOF
[server]
listen = "127.0.0.1:$2"
sessions = $3

[reload]
enabled = false

[apis.petstore]
spec = "$spec"
mock = true
EOF
    env "${clean_env[@]}" RUST_LOG=warn "$bin" serve --config "$tmp/$1.toml" \
        </dev/null >"$tmp/$1.log" 2>&1 &
    pids+=($!)
    eval "pid_$1=\$!"
}

start_replica A "$port_a" false
start_replica B "$port_b" false
start_replica C "$port_c" true
start_replica D "$port_d" true
# shellcheck disable=SC2154 # pid_X are set by start_replica
{
    wait_healthy A "$port_a" "$pid_A"
    wait_healthy B "$port_b" "$pid_B"
    wait_healthy C "$port_c" "$pid_C"
    wait_healthy D "$port_d" "$pid_D"
}

# --- the balancer --------------------------------------------------------------------------

mkdir -p "$tmp/nginx"
balancer() { # name port
    cat <<EOF
    server {
        listen 127.0.0.1:$2;
        access_log $tmp/nginx/$1.access.log scale;
        location / {
            proxy_pass http://$1;
            proxy_http_version 1.1;          # keep-alive to the replicas; SSE needs 1.1
            proxy_set_header Connection "";
            proxy_set_header Host \$http_host; # restmcp checks Host (server.allowed_hosts)
            proxy_buffering off;             # stream SSE events as they come
        }
    }
EOF
}
cat >"$tmp/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 1;  # one worker: one round-robin state, so the order is predictable
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 256; }
http {
    client_body_temp_path $tmp/nginx/client_body;
    proxy_temp_path $tmp/nginx/proxy;
    fastcgi_temp_path $tmp/nginx/fastcgi;
    uwsgi_temp_path $tmp/nginx/uwsgi;
    scgi_temp_path $tmp/nginx/scgi;
    # Which replica served each request, and the JSON-RPC body to tell the requests apart.
    log_format scale escape=json '{"uri":"\$request_uri","method":"\$request_method",'
        '"status":"\$status","upstream":"\$upstream_addr","session":"\$http_mcp_session_id",'
        '"new_session":"\$sent_http_mcp_session_id","tag":"\$http_x_scale_tag",'
        '"body":"\$request_body"}';

    upstream stateless {
        server 127.0.0.1:$port_a;
        server 127.0.0.1:$port_b;
        keepalive 8;
    }
    upstream rr {
        server 127.0.0.1:$port_c;
        server 127.0.0.1:$port_d;
        keepalive 8;
    }
    upstream ip-hash {
        hash \$remote_addr consistent;
        server 127.0.0.1:$port_c;
        server 127.0.0.1:$port_d;
        keepalive 8;
    }
    upstream sid-hash {
        hash \$http_mcp_session_id consistent;
        server 127.0.0.1:$port_c;
        server 127.0.0.1:$port_d;
        keepalive 8;
    }
$(balancer stateless "${ports[4]}")
$(balancer rr "${ports[5]}")
$(balancer ip-hash "${ports[6]}")
$(balancer sid-hash "${ports[7]}")
}
EOF
nginx_args=(-p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log")
"$nginx_bin" -t -q "${nginx_args[@]}" || die "nginx rejected the generated config ($tmp/nginx/nginx.conf)"
"$nginx_bin" "${nginx_args[@]}" </dev/null >"$tmp/nginx.log" 2>&1 &
pids+=($!)
wait_healthy nginx "${ports[4]}" "$!"
for port in "${ports[@]:5}"; do
    wait_healthy nginx "$port" "${pids[-1]}"
done
say "4 replicas and nginx ($("$nginx_bin" -v 2>&1 | sed 's/.*: //')) up after $((SECONDS - started)) s"

# --- the clients ---------------------------------------------------------------------------

cat >"$tmp/setup.json" <<EOF
{
  "replicas": {
    "127.0.0.1:$port_a": "A", "127.0.0.1:$port_b": "B",
    "127.0.0.1:$port_c": "C", "127.0.0.1:$port_d": "D"
  },
  "balancers": {
    "stateless": {"url": "http://127.0.0.1:${ports[4]}/mcp", "log": "$tmp/nginx/stateless.access.log"},
    "rr": {"url": "http://127.0.0.1:${ports[5]}/mcp", "log": "$tmp/nginx/rr.access.log"},
    "ip-hash": {"url": "http://127.0.0.1:${ports[6]}/mcp", "log": "$tmp/nginx/ip-hash.access.log"},
    "sid-hash": {"url": "http://127.0.0.1:${ports[7]}/mcp", "log": "$tmp/nginx/sid-hash.access.log"}
  }
}
EOF
status=0
"$venv/bin/python" tests/scale-out/scale_client.py "$tmp/setup.json" || status=$?
say "took $((SECONDS - started)) s"
exit "$status"
