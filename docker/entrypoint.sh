#!/usr/bin/env bash
# The image's entrypoint: runs the appliance (its arguments are the command) and starts it again
# if it dies. A crash, such as V8's "Reached heap limit" abort (exit 134) or a kill by the kernel's
# OOM killer (137), would otherwise leave the API, the MX listener, the MTA and the webhooks down
# for every tenant until someone noticed. It restarts only on such deaths (exit status 128 or
# more: killed by a signal); a clean exit or an error exit (1: bad configuration, a failed CLI
# command) ends the container, since starting again would fail the same way.
#
# SIGTERM and SIGINT (docker stop, Ctrl-C) are passed to the appliance, which shuts down gracefully;
# the script then exits with its status and does not restart it. Restarts back off from 1 s to
# 30 s when the appliance keeps dying young, and back to 1 s once it has run for a minute.
set -uo pipefail

[ "$#" -gt 0 ] || { echo "usage: entrypoint.sh COMMAND [ARGS...]" >&2; exit 64; }

delay=1
max_delay=30
stopping=""
child=""

forward() {
  stopping=1
  [ -n "$child" ] && kill -s "$1" "$child" 2>/dev/null
}
trap 'forward TERM' TERM
trap 'forward INT' INT

while :; do
  started=$(date +%s)
  "$@" &
  child=$!
  # `wait` returns early when a trapped signal arrives: wait again until the child has exited.
  while :; do
    wait "$child"
    status=$?
    kill -0 "$child" 2>/dev/null || break
  done
  child=""
  if [ -n "$stopping" ] || [ "$status" -lt 128 ]; then exit "$status"; fi
  ran=$(( $(date +%s) - started ))
  [ "$ran" -ge 60 ] && delay=1
  echo "{\"level\":\"ERROR\",\"message\":\"herald exited with status $status after ${ran} s; starting it again in ${delay} s\"}" >&2
  sleep "$delay" &
  wait $! 2>/dev/null
  [ -n "$stopping" ] && exit "$status"
  delay=$(( delay * 2 > max_delay ? max_delay : delay * 2 ))
done
