#!/usr/bin/env bash
# The console (/console of `restmcp serve`) in a real browser:
#   chromium (Debian package; installed with apt-get when missing, which needs root) as the
#     browser, headless, driven by playwright==1.65.2 (PyPI) told to use it (executable_path):
#     `playwright install` is never run, no browser is downloaded;
#   httpbin==0.10.4 under gunicorn==27.0.1 as the live upstream, its access log (gunicorn
#     --access-logfile) the witness of what did or did not reach it;
#   the shipped config.toml (Petstore in mock mode) plus tests/console/httpbin-api.yaml;
#   tests/console/console_test.py the checks (see its docstring): the API list, one tool's
#     provenance, calls tried from the generated form, a destructive call confirmed and one
#     declined in the page, the live calls list and its charts, the console refused without
#     the inbound token, and off (404) with server.console = false.
#
#   RESTMCP_BIN=path/to/restmcp bash tests/console/run.sh
#   CONSOLE_SCREENSHOTS=docs/src/images bash tests/console/run.sh   # also refresh the book's pictures
#
# RESTMCP_BIN defaults to target/debug/restmcp (relative to the repo root); build it first.
# CONSOLE_SCREENSHOTS, when set, is a directory (relative to the repo root unless absolute)
# the test writes console-*.png into (1280x800, one per page). Needs python3 (3.11 or later)
# and PyPI (install only). Two venvs, as httpbin 0.10.4 wants greenlet < 3 on Python 3.11 and
# Playwright greenlet >= 3: httpbin and gunicorn go into target/interop/python-venv (shared
# with the other harnesses), Playwright (with anyio and httpx2, which tests/lib/harness.py
# imports) into target/console/venv. At run time only 127.0.0.1 is contacted.
# Output: one line per check (`ok N - ...` / `not ok N - ...`); exit status 1 when any failed,
# and then the work directories (stderr of every process, httpbin's access log) are kept and
# named.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# root, bin, venv, python; die, need_bin, need_python, setup_venv, start_httpbin, stop_httpbin, finish
source "$here/../lib/harness.sh"
say() { echo "# $*"; }
# install_from_debian (uses say and die)
source "$here/../lib/apt.sh"

httpbin_requirements=("httpbin==0.10.4" "gunicorn==27.0.1")
browser_requirements=("playwright==1.65.2" "anyio==4.16.0" "httpx2==2.16.2")
browser_venv="$root/target/console/venv"

need_bin
[[ -f "$here/console_test.py" ]] || die "not found: $here/console_test.py"
need_python

# Chromium from the Debian packages (the package is `chromium` on bookworm and later).
find_chromium() {
  command -v chromium || { [[ -x /usr/bin/chromium ]] && echo /usr/bin/chromium; }
}
chromium="$(find_chromium)" || { install_from_debian chromium chromium; chromium="$(find_chromium)" || die "chromium still not found"; }

setup_venv "${httpbin_requirements[@]}"
if [[ ! -x "$browser_venv/bin/python" ]]; then
  mkdir -p "$(dirname "$browser_venv")"
  "$python" -m venv "$browser_venv" || die "cannot create the venv $browser_venv"
fi
# A no-op (and no download) when the venv already has these versions.
"$browser_venv/bin/python" -m pip install -q --disable-pip-version-check "${browser_requirements[@]}" \
  || die "pip install ${browser_requirements[*]} failed"

shots=()
if [[ -n "${CONSOLE_SCREENSHOTS:-}" ]]; then
  case "$CONSOLE_SCREENSHOTS" in /*) dir="$CONSOLE_SCREENSHOTS" ;; *) dir="$root/$CONSOLE_SCREENSHOTS" ;; esac
  shots=(--screenshots "$dir")
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/restmcp-console-httpbin-XXXXXX")"
trap stop_httpbin EXIT
trap 'exit 130' INT TERM HUP
start_httpbin "$work" 4 '%(h)s %(t)s "%(r)s" %(s)s %(b)s'
echo "# httpbin $httpbin, access log $access_log, chromium $chromium"

status=0
"$browser_venv/bin/python" "$here/console_test.py" --bin "$bin" --httpbin "$httpbin" --access-log "$access_log" \
  --chromium "$chromium" "${shots[@]}" || status=1

finish "$status" "$work"
