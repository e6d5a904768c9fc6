#!/usr/bin/env bash
# Builds the JRE base image for JAR deploys from Debian packages, for machines that cannot pull images:
# debootstrap a minimal bookworm with openjdk-17-jre-headless, then `docker import`. Reuses the image when
# it already exists. One build per image name at a time on this machine: a second caller (npm start's
# background build and a deploy that needs the image, two platforms on one engine) waits for the first and
# then finds the image. The image gets its name only once `java -version` ran in it: a failed build leaves
# no image behind that a later call would take for a good one.
# Exit codes: 0 built or already there, 3 this machine cannot build it (says why), 1 the build failed.
set -euo pipefail

IMAGE="${1:?usage: build-jre-image.sh IMAGE}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# Long enough for a build on a slow mirror; a lock held longer than that is a stuck build.
LOCK_WAIT_SECONDS="${JRE_BUILD_LOCK_WAIT_SECONDS:-1800}"

exists() { docker image inspect "$IMAGE" >/dev/null 2>&1; }

if exists; then
  echo "JRE base image $IMAGE already exists"
  exit 0
fi
[ "$(id -u)" = 0 ] || { echo "building $IMAGE from Debian packages needs root (debootstrap): run as root or set DEPLOY_BASE_IMAGE to an image the engine has" >&2; exit 3; }
for tool in debootstrap flock docker; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install $([ "$tool" = docker ] && echo docker.io || ([ "$tool" = flock ] && echo util-linux || echo "$tool"))" >&2; exit 3; }
done

# One lock per image name, in a fixed place whatever TMPDIR says, opened without truncating it.
lock="/tmp/opsflow-jre-build-$(printf '%s' "$IMAGE" | tr -c 'A-Za-z0-9._-' '_').lock"
exec 9<>"$lock"
if ! flock -n 9; then
  echo "Another build of $IMAGE is under way on this machine: waiting for it"
  flock -w "$LOCK_WAIT_SECONDS" 9 || { echo "the build of $IMAGE holding $lock did not end within $LOCK_WAIT_SECONDS s" >&2; exit 1; }
fi
if exists; then
  echo "JRE base image $IMAGE was built meanwhile"
  exit 0
fi

rootfs="$(mktemp -d /tmp/opsflow-jre-rootfs.XXXXXX)"
log="$rootfs.log"
candidate="opsflow/jre-candidate:$$"
trap 'rm -rf "$rootfs" "$log"; docker rmi "$candidate" >/dev/null 2>&1 || true' EXIT
echo "Building $IMAGE from Debian bookworm (debootstrap into $rootfs)"
debootstrap --variant=minbase --include=openjdk-17-jre-headless,ca-certificates-java,curl bookworm "$rootfs" "$MIRROR" >"$log" 2>&1 \
  || { tail -5 "$log" >&2; exit 1; }
# Keep the image small: no package caches or docs.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/*
echo "Importing $IMAGE into the Docker engine"
tar -C "$rootfs" -c . | docker import \
  --change 'ENV JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64' \
  --change 'ENV PATH=/usr/lib/jvm/java-17-openjdk-amd64/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'WORKDIR /app' \
  - "$candidate" >/dev/null
docker run --rm "$candidate" java -version 2>&1 | sed -n 1p
docker tag "$candidate" "$IMAGE"
echo "Built $IMAGE"
