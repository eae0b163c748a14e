#!/usr/bin/env bash
# Starts (or stops) a private Docker engine on machines that have none running, as in CI here:
#   eval "$(bash docker/dockerd.sh start)"   # exports DOCKER_HOST
#   bash docker/dockerd.sh stop
# The engine keeps its state under docker/.build/engine and uses host networking only.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD/docker/.build/engine"
sock="$root/docker.sock"

case "${1:-start}" in
  start)
    if ! command -v dockerd >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
      apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap >&2
    fi
    mkdir -p "$root/data" "$root/exec"
    if ! DOCKER_HOST="unix://$sock" docker info >/dev/null 2>&1; then
      nohup dockerd --data-root "$root/data" --exec-root "$root/exec" --pidfile "$root/dockerd.pid" \
        --host "unix://$sock" --storage-driver=overlay2 --iptables=false --ip6tables=false \
        --bridge=none --userland-proxy=false >"$root/dockerd.log" 2>&1 &
      for _ in $(seq 1 60); do
        DOCKER_HOST="unix://$sock" docker info >/dev/null 2>&1 && break
        sleep 1
      done
    fi
    DOCKER_HOST="unix://$sock" docker info >/dev/null
    echo "export DOCKER_HOST=unix://$sock"
    ;;
  stop)
    if [ -f "$root/dockerd.pid" ]; then
      pid=$(cat "$root/dockerd.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 30); do [ -e "/proc/$pid" ] || break; sleep 1; done
    fi
    # dockerd leaves its network namespace bind-mounted under the exec root.
    grep -o "$root/exec[^ ]*" /proc/mounts 2>/dev/null | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
    ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
