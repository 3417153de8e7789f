# What the run.sh of tests/confirm, tests/hostile, tests/idempotency, tests/results,
# tests/surface and tests/console share;
# each sources it (after `set -euo pipefail` and setting `here`, its own folder) and keeps its
# own checks, pins and the running of its tests. (tests/lib/apt.sh installs a missing Debian
# package for tests/idempotency and tests/scale-out.) It sets:
#   root    the repo root;
#   bin     RESTMCP_BIN (default target/debug/restmcp), relative to the repo root unless absolute;
#   venv    target/interop/python-venv (the venv of tests/interop/run-python.sh, reused);
#   python  $PYTHON, else python3: what makes the venv;
# and gives:
#   die MESSAGE         "run.sh: MESSAGE" on stderr, exit 1;
#   need_bin            the restmcp binary is there and executable;
#   need_python         $python is found and is 3.11 or later;
#   need_node           node (>= 20) and npm are found;
#   setup_venv PIN...   the venv, with these pinned packages (pip: a no-op, and no download,
#                       when it has them already); exports PYTHONDONTWRITEBYTECODE=1;
#   start_httpbin WORK THREADS FORMAT
#                       httpbin under the venv's gunicorn on a free loopback port (three tries),
#                       its access log WORK/httpbin-access.log in FORMAT (gunicorn
#                       --access-logformat), its stderr WORK/httpbin.stderr; sets httpbin (its
#                       URL), httpbin_pid and access_log;
#   stop_httpbin        stops it (nothing when none runs): for the caller's EXIT trap.
#   finish STATUS WORK  stops httpbin and exits with STATUS: WORK (httpbin's access log, the
#                       stderr of every process) removed when it is 0, kept and named when not.

root="$(cd "$here/../.." && pwd)"

bin="${RESTMCP_BIN:-target/debug/restmcp}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac

venv="$root/target/interop/python-venv"
python="${PYTHON:-python3}"

die() { echo "run.sh: $*" >&2; exit 1; }

need_bin() {
  [[ -x "$bin" ]] || die "restmcp binary not found or not executable: $bin (set RESTMCP_BIN or run cargo build)"
}

need_python() {
  command -v "$python" >/dev/null || die "$python not found (set PYTHON)"
  "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "python >= 3.11 needed, found $("$python" --version 2>&1)"
}

# $1: what node is needed for, named in the messages.
need_node() {
  command -v node >/dev/null || die "node not found (needed for $1)"
  command -v npm >/dev/null || die "npm not found (needed for $1)"
  local node_major
  node_major="$(node -p 'process.versions.node.split(".")[0]')"
  (( node_major >= 20 )) || die "node >= 20 needed, found $(node --version)"
}

setup_venv() {
  if [[ ! -x "$venv/bin/python" ]]; then
    mkdir -p "$(dirname "$venv")"
    "$python" -m venv "$venv" || die "cannot create the venv $venv"
  fi
  # A no-op (and no download) when the venv already has these versions.
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@" \
    || die "pip install $* failed"
  # No __pycache__ written in tests/ (the test, tests/lib, an app it imports) by the test's
  # Python processes.
  export PYTHONDONTWRITEBYTECODE=1
}

httpbin_pid=""
httpbin=""
access_log=""

start_httpbin() {
  local work="$1" threads="$2" format="$3" port
  access_log="$work/httpbin-access.log"
  httpbin=""
  for _ in 1 2 3; do
    port="$("$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    (cd "$work" && exec "$venv/bin/python" -m gunicorn --bind "127.0.0.1:$port" --workers 1 --threads "$threads" \
      --access-logfile "$access_log" --access-logformat "$format" \
      httpbin:app) 2>"$work/httpbin.stderr" &
    httpbin_pid=$!
    for _ in $(seq 1 100); do
      if grep -q "Listening at: http://" "$work/httpbin.stderr" 2>/dev/null; then
        httpbin="http://127.0.0.1:$port"
        return 0
      fi
      kill -0 "$httpbin_pid" 2>/dev/null || break
      sleep 0.2
    done
    stop_httpbin
  done
  die "httpbin (gunicorn) did not start; its stderr: $(tail -n 20 "$work/httpbin.stderr")"
}

stop_httpbin() {
  if [[ -n "$httpbin_pid" ]]; then
    kill "$httpbin_pid" 2>/dev/null || true
    wait "$httpbin_pid" 2>/dev/null || true
  fi
  httpbin_pid=""
}

finish() {
  local status="$1" work="$2"
  stop_httpbin
  if (( status != 0 )); then
    echo "run.sh: FAILED; the failing checks are listed above (httpbin's access log and stderr kept in $work)" >&2
  else
    rm -rf "$work"
  fi
  exit "$status"
}
