# What bench/run.sh and bench/callgrind.sh share; each sources it after defining `say` and
# `die` and setting `python`. It gives:
#   apt_install PACKAGE...   the first of PACKAGE... that installs from the Debian packages
#                            (root and apt-get; the package lists are refreshed once when
#                            none installs), with the nginx package kept from starting its own
#                            service on port 80;
#   need_nginx               sets nginx_bin, installing nginx when it is missing;
#   free_port                a free TCP port on 127.0.0.1;
#   start_upstream WORK PORT [EXTRA]
#                            nginx in WORK (its pid in WORK/nginx.pid) answering GET
#                            /items/{id} on 127.0.0.1:PORT with ITEM_BODY, the fixed JSON an
#                            items API might answer (about 200 bytes); EXTRA is more of nginx's
#                            `http` block (run.sh's reverse proxy).

ITEM_BODY='{"id":42,"name":"Widget","price":9.99,"tags":["blue","small","metal"],"stock":{"berlin":12,"paris":0,"lisbon":7},"description":"A small blue metal widget for benchmarks."}'

apt_install() {
    [[ $(id -u) -eq 0 ]] || die "$1 is missing and installing it needs root"
    command -v apt-get >/dev/null || die "$1 is missing and there is no apt-get"
    local policy=/usr/sbin/policy-rc.d placed="" ok="" attempt package
    # Keeps the nginx package from starting its own service on port 80.
    if [[ ! -e $policy ]]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod 755 "$policy"; placed=1
    fi
    say "installing $* from the Debian packages"
    for attempt in 1 2; do
        [[ $attempt == 2 ]] && { DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 || true; }
        for package in "$@"; do
            if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                -o Dpkg::Use-Pty=0 "$package" >/dev/null 2>&1; then ok=1; break 2; fi
        done
    done
    [[ -z $placed ]] || rm -f "$policy"
    [[ -n $ok ]] || die "could not install $*"
}

need_nginx() {
    nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
    [[ -x $nginx_bin ]] || { apt_install nginx-light nginx; nginx_bin=/usr/sbin/nginx; }
}

free_port() { "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_upstream() {
    local work="$1" port="$2" extra="${3:-}"
    cat >"$work/nginx.conf" <<NGINX
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    keepalive_requests 1000000;
    client_body_temp_path $work/body;
    proxy_temp_path $work/proxy;
    fastcgi_temp_path $work/fastcgi;
    uwsgi_temp_path $work/uwsgi;
    scgi_temp_path $work/scgi;
    server {
        listen 127.0.0.1:$port;
        location /items/ {
            default_type application/json;
            return 200 '$ITEM_BODY';
        }
    }
$extra
}
NGINX
    "$nginx_bin" -c "$work/nginx.conf" -p "$work" || die "nginx did not start"
}
