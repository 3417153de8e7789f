# Installing a missing tool from the Debian packages, for the run.sh of tests/idempotency
# (redis-server) and tests/scale-out (nginx); each sources it and defines `say` and `die`
# first. It gives:
#   install_from_debian WHAT PACKAGE...
#       installs the first PACKAGE that apt-get can install (alternative names of WHAT across
#       Debian releases), running apt-get update once first when none can (a fresh machine);
#       dies, showing apt-get's output, when none installs. Needs root and apt-get. The
#       package would start its own service (redis-server on 6379, nginx on 80), which the
#       tests never use: policy-rc.d (the Debian way) keeps it from starting, placed only when
#       absent and removed again right after.

_apt_install_one_of() {
  local log="$1" package
  shift
  for package in "$@"; do
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      -o Dpkg::Use-Pty=0 "$package" >>"$log" 2>&1 && return 0
  done
  return 1
}

install_from_debian() {
  local what="$1"
  shift
  [[ $(id -u) -eq 0 ]] || die "$what is not installed and installing it needs root"
  command -v apt-get >/dev/null || die "$what is not installed and there is no apt-get"
  local log policy=/usr/sbin/policy-rc.d placed="" ok=""
  log="$(mktemp)"
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    placed=1
  fi
  say "installing $what from the Debian packages"
  if _apt_install_one_of "$log" "$@"; then
    ok=1
  elif DEBIAN_FRONTEND=noninteractive apt-get update -qq >>"$log" 2>&1 && _apt_install_one_of "$log" "$@"; then
    ok=1
  fi
  [[ -z $placed ]] || rm -f "$policy"
  if [[ -z $ok ]]; then
    cat "$log" >&2
    rm -f "$log"
    die "could not install $what"
  fi
  rm -f "$log"
}
