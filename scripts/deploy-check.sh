#!/usr/bin/env bash
# deploy-check: what `make deploy-check` (and .ci/run, after make test) runs.
#
# 1. Builds the container image (deploy/Containerfile) with podman, offline:
#    the static binary, the host's CA certificates and a passwd entry are the
#    whole build context. Starts the bridge from the image and asks /healthz:
#    with `podman run` where the sandbox allows containers, else from the
#    image's filesystem (podman image mount) under chroot as the image's user
#    (uid 65532).
#    Installs podman (and runc, for hosts with hybrid cgroups) with apt-get.
# 2. Installs helm from the Go module proxy (cached in $(go env GOPATH)/bin),
#    runs helm lint and helm template for each Redis mode (standalone,
#    sentinel, cluster) and decodes the rendered manifests strictly into the
#    Kubernetes API types (deploy/helm/check).
#
# Installs podman with apt-get when it is missing (as root, or through sudo).
# A step that cannot run here is skipped with the reason printed, never
# failed; anything that runs and is wrong fails.
#
# usage: scripts/deploy-check.sh [image|compose|helm|all]
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
HELM_VERSION=${HELM_VERSION:-v3.22.0}
IMAGE=${IMAGE:-localhost/askbridge-check:latest}
CHART=deploy/helm/askbridge

start=$SECONDS
work=$(mktemp -d)
pids=()
mounted_image=""
containers_conf=""   # set by image_check once podman run works here
compose_up=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "$compose_up" ]; then
    (cd deploy/compose && CONTAINERS_CONF=$containers_conf podman-compose -p askbridge-check down -v >/dev/null 2>&1) || true
  fi
  [ -n "$mounted_image" ] && podman image unmount "$mounted_image" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
step() { echo "== deploy-check: $* (+$((SECONDS - start))s)"; }
skip() { echo "== deploy-check: SKIPPED $*" >&2; }

SUDO=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
    || echo $((20000 + RANDOM % 20000))
}

# wait_health URL: up to 15 s for 200 from URL; prints the body.
wait_health() {
  local url=$1 i body
  for i in $(seq 1 75); do
    if body=$(curl -fsS --max-time 2 "$url" 2>/dev/null); then
      echo "$url -> $body"
      return 0
    fi
    sleep 0.2
  done
  echo "no 200 from $url within 15 s" >&2
  return 1
}

image_check() {
  if ! command -v podman >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ]; }; then
      step "installing podman with apt-get"
      export DEBIAN_FRONTEND=noninteractive
      $SUDO apt-get install -y -qq podman >/dev/null 2>&1 \
        || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq podman >/dev/null; }
    fi
  fi
  if ! command -v podman >/dev/null 2>&1; then
    skip "image: podman is not installed and apt-get cannot install it here"
    return 0
  fi
  command -v curl >/dev/null 2>&1 || $SUDO apt-get install -y -qq curl >/dev/null

  step "make image: static binary, podman build FROM scratch, offline"
  make -s image IMAGE="${IMAGE%:*}" IMAGE_TAG=check IMAGE_CONTEXT="$work/context" GO="$GO" >/dev/null
  local user entry
  user=$(podman image inspect -f '{{.Config.User}}' "$IMAGE")
  entry=$(podman image inspect -f '{{json .Config.Entrypoint}}' "$IMAGE")
  [ "$user" = "65532:65532" ] || { echo "image user is '$user', want 65532:65532" >&2; return 1; }
  echo "image $IMAGE: user $user, entrypoint $entry, $(podman image inspect -f '{{.Size}}' "$IMAGE") bytes"

  # The image's filesystem, read-only, without a container: what the
  # checks below inspect, and what the bridge starts from if podman cannot
  # run containers here.
  local cid rootfs
  rootfs=$(podman image mount "$IMAGE")
  mounted_image=$IMAGE
  if [ -e "$rootfs/bin/sh" ] || [ -e "$rootfs/usr/bin/sh" ]; then
    echo "the image has a shell" >&2
    return 1
  fi
  if ! grep -q '^askbridge:x:65532:65532:' "$rootfs/etc/passwd"; then
    echo "the image has no passwd entry for uid 65532" >&2
    return 1
  fi
  echo "image filesystem: $(cd "$rootfs" && find . -type f | sort | tr '\n' ' ')"

  local port url out
  port=$(free_port)
  url=http://127.0.0.1:$port/healthz
  step "podman run, then GET /healthz"
  # Rootful podman asks the runtime for rlimits above what some sandboxes
  # allow (EPERM from setrlimit), so ask for no more than this shell has.
  local nofile nproc
  nofile=$(ulimit -Sn); [ "$nofile" = unlimited ] || [ "$nofile" -gt 65536 ] && nofile=65536
  nproc=$(ulimit -Su); [ "$nproc" = unlimited ] || [ "$nproc" -gt 4096 ] && nproc=4096
  local runtimes=("")
  # crun refuses hybrid cgroup v1/v2 hosts; runc runs there.
  command -v runc >/dev/null 2>&1 || $SUDO apt-get install -y -qq runc >/dev/null 2>&1 || true
  command -v runc >/dev/null 2>&1 && runtimes+=(runc)
  # DEPLOY_CHECK_CHROOT=1 exercises the fallback below on a host where podman run works.
  local why=""
  if [ -n "${DEPLOY_CHECK_CHROOT:-}" ]; then runtimes=(); why="DEPLOY_CHECK_CHROOT is set"; fi
  local rt
  for rt in ${runtimes[@]+"${runtimes[@]}"}; do
    local rtflag=()
    [ -n "$rt" ] && rtflag=(--runtime "$rt")
    podman rm -f askbridge-check-run >/dev/null 2>&1 || true
    if ! out=$(podman "${rtflag[@]}" run -d --name askbridge-check-run --no-healthcheck --network host --ulimit "nofile=$nofile:$nofile" \
      --ulimit "nproc=$nproc:$nproc" -e BRIDGE_ADDR=127.0.0.1:$port "$IMAGE" 2>&1); then
      why+="${rt:-default runtime}: $(echo "$out" | tail -1); "
      echo "podman run (${rt:-default runtime}) failed: $(echo "$out" | tail -1)"
      podman rm -f askbridge-check-run >/dev/null 2>&1 || true
      continue
    fi
    cid=$out
    echo "container $cid (${rt:-default runtime})"
    # What compose_check needs to start containers the same way.
    printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n' "$nofile" "$nofile" "$nproc" "$nproc" >"$work/containers.conf"
    [ -n "$rt" ] && printf '[engine]\nruntime = "%s"\n' "$rt" >>"$work/containers.conf"
    containers_conf=$work/containers.conf
    local ok=0
    if wait_health "$url" && podman exec "$cid" /usr/local/bin/askbridge health --ready && podman exec "$cid" /usr/local/bin/askbridge version; then
      podman stop -t 35 "$cid" >/dev/null
      podman logs "$cid" 2>&1 | grep -q 'msg=stopped' || { echo "the bridge did not shut down cleanly on SIGTERM" >&2; ok=1; }
    else
      ok=1
    fi
    [ $ok -eq 0 ] || podman logs "$cid" >&2 || true
    podman rm -f "$cid" >/dev/null 2>&1 || true
    return $ok
  done
  echo "podman run cannot start containers in this sandbox: $why"
  echo "falling back to the image's filesystem (podman image mount) under chroot, as uid 65532"

  local chroot
  chroot=$(command -v chroot)
  if ! "$chroot" --userspec=65532:65532 "$rootfs" /usr/local/bin/askbridge version; then
    skip "image run: chroot is not permitted here either (the image was built and inspected)"
    return 0
  fi
  local log=$work/bridge.log
  # The image's ENV (BRIDGE_ADDR) is replaced by the test address; HOME etc. are not needed.
  env -i BRIDGE_ADDR=127.0.0.1:$port "$chroot" --userspec=65532:65532 "$rootfs" /usr/local/bin/askbridge serve >"$log" 2>&1 &
  pids+=($!)
  if ! wait_health "$url"; then
    cat "$log" >&2
    return 1
  fi
  env -i BRIDGE_ADDR=127.0.0.1:$port "$chroot" --userspec=65532:65532 "$rootfs" /usr/local/bin/askbridge health --ready
  kill "${pids[-1]}"
  wait "${pids[-1]}" 2>/dev/null || true
  grep -q 'msg=stopped' "$log" || { echo "the bridge did not shut down cleanly on SIGTERM:" >&2; cat "$log" >&2; return 1; }
}

helm_check() {
  local bindir helm
  bindir=$($GO env GOPATH)/bin
  helm=$bindir/helm
  if ! [ -x "$helm" ] || ! $GO version -m "$helm" 2>/dev/null | grep -Eq "^[[:space:]]+mod[[:space:]]+helm.sh/helm/v3[[:space:]]+$HELM_VERSION[[:space:]]"; then
    step "installing helm $HELM_VERSION from the Go module proxy (cached in $bindir)"
    GOBIN=$bindir GOFLAGS=-mod=mod $GO install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  fi
  step "testing and building the manifest checker (deploy/helm/check)"
  (cd deploy/helm/check && $GO test -count=1 . && $GO build -o "$work/check" .)
  for mode in standalone sentinel cluster; do
    local values=$CHART/ci/$mode-values.yaml flags=(-mode "$mode")
    grep -q 'urlSecret:' "$values" && flags+=(-url-secret)
    grep -q 'enabled: true' "$values" && flags+=(-service-monitor)
    step "helm lint + template + strict decode ($mode)"
    "$helm" lint --strict "$CHART" -f "$values" >"$work/lint.log" 2>&1 || { cat "$work/lint.log" >&2; return 1; }
    "$helm" template askbridge "$CHART" -f "$values" >"$work/$mode.yaml"
    "$work/check" "${flags[@]}" <"$work/$mode.yaml"
  done
  step "values the chart refuses: a wrong Redis mode, a misspelt key (values.schema.json)"
  local bad
  for bad in "redis.mode=memcached|/redis/mode': value must be one of" "replicas=3|additional properties 'replicas' not allowed"; do
    if "$helm" template askbridge "$CHART" --set "${bad%%|*}" >/dev/null 2>"$work/err.log"; then
      echo "helm template accepted --set ${bad%%|*}" >&2
      return 1
    fi
    grep -qF "${bad#*|}" "$work/err.log" || { cat "$work/err.log" >&2; return 1; }
  done
}

# compose_check: the quick start for a team in docs/operations.md (deploy/compose) with
# the image just built: Redis comes up with AOF, the bridge reaches it and
# answers an agent's question; the question survives a Redis restart.
compose_check() {
  if [ -z "$containers_conf" ]; then
    skip "compose: podman cannot run containers here (see above)"
    return 0
  fi
  if ! command -v podman-compose >/dev/null 2>&1; then
    $SUDO apt-get install -y -qq podman-compose >/dev/null 2>&1 || true
  fi
  if ! command -v podman-compose >/dev/null 2>&1; then
    skip "compose: podman-compose is not installed and apt-get cannot install it here"
    return 0
  fi
  export CONTAINERS_CONF=$containers_conf
  local redis_image=docker.io/library/redis:7.4-alpine
  if ! podman image exists "$redis_image"; then
    # Offline: a stand-in image from the host's redis-server (installed by
    # make test), with its shared libraries.
    if ! command -v redis-server >/dev/null 2>&1 || ! command -v ldd >/dev/null 2>&1; then
      skip "compose: no Redis image and no host redis-server to make one from"
      return 0
    fi
    step "compose: a stand-in Redis image from the host's redis-server (offline)"
    local d=$work/redis-image lib
    mkdir -p "$d/root/usr/bin" "$d/root/data" "$d/root/tmp"
    cp "$(command -v redis-server)" "$(command -v redis-cli)" "$d/root/usr/bin/"
    for lib in $( (ldd "$(command -v redis-server)"; ldd "$(command -v redis-cli)") | grep -o '/[^ ]*' | sort -u); do
      mkdir -p "$d/root$(dirname "$lib")"
      cp -L "$lib" "$d/root$lib"
    done
    chmod 1777 "$d/root/tmp" "$d/root/data"
    printf 'FROM scratch\nCOPY root/ /\nWORKDIR /data\n' >"$d/Containerfile"
    redis_image=localhost/askbridge-check-redis:latest
    podman build -q --pull=never --network=none -t "$redis_image" "$d" >/dev/null
  fi
  step "compose: podman-compose up (deploy/compose)"
  local port
  port=$(free_port)
  cp -r deploy/compose "$work/compose"
  (cd "$work/compose" && ./init-secrets.sh >/dev/null)
  compose_up=1
  (cd "$work/compose" && REDIS_IMAGE=$redis_image ASKBRIDGE_IMAGE=$IMAGE ASKBRIDGE_PORT=$port \
    podman-compose -p askbridge-check up -d >"$work/compose.log" 2>&1) || { cat "$work/compose.log" >&2; return 1; }
  if ! wait_health "http://127.0.0.1:$port/readyz"; then
    podman logs askbridge-check_bridge_1 >&2 || true
    return 1
  fi
  local agent operator body
  agent=$(cat "$work/compose/secrets/deploy-bot-token")
  operator=$(cat "$work/compose/secrets/operator-token")
  body='{"run_id":"deploy-check","agent_id":"deploy-bot","question":"Ship it?","options":[{"label":"Yes"},{"label":"No"}]}'
  curl -fsS -X POST "http://127.0.0.1:$port/api/projects/ops/agent-questions" -H "Authorization: Bearer $agent" \
    -H 'Content-Type: application/json' -d "$body" >/dev/null
  step "compose: restart Redis, the question is still there (AOF)"
  podman restart -t 5 askbridge-check_redis_1 >/dev/null 2>&1
  wait_health "http://127.0.0.1:$port/readyz" >/dev/null
  curl -fsS "http://127.0.0.1:$port/api/projects/ops/agent-questions?status=pending" -H "Authorization: Bearer $operator" \
    | grep -q '"question":"Ship it?"' || { echo "the question did not survive a Redis restart" >&2; return 1; }
  echo "compose: asked through the bridge, found again after a Redis restart"
}

case "${1:-all}" in
  image) image_check ;;
  compose) image_check; compose_check ;;
  helm) helm_check ;;
  all) image_check; compose_check; helm_check ;;
  *) echo "usage: scripts/deploy-check.sh [image|compose|helm|all]" >&2; exit 2 ;;
esac
step "done"
