#!/usr/bin/env bash
# Builds the JRE base image for JAR deploys from Debian packages, for machines that cannot pull images:
# debootstrap a minimal bookworm with openjdk-17-jre-headless, then `docker import`. Reuses the image when
# it already exists. One build per image name at a time on this machine: a second caller (npm start's
# background build and a deploy that needs the image, two platforms on one engine) waits for the first and
# then finds the image.
set -euo pipefail

IMAGE="${1:-${DEPLOY_BASE_IMAGE:-opsflow/jre:17}}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

exists() { docker image inspect "$IMAGE" >/dev/null 2>&1; }

if exists; then
  echo "JRE base image $IMAGE already exists"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "debootstrap is missing: apt-get install debootstrap" >&2; exit 3; }

lock="${TMPDIR:-/tmp}/opsflow-jre-build-$(printf '%s' "$IMAGE" | tr -c 'A-Za-z0-9._-' '_').lock"
exec 9>"$lock"
if ! flock -n 9; then
  echo "Another build of $IMAGE is under way on this machine: waiting for it"
  flock 9
fi
if exists; then
  echo "JRE base image $IMAGE was built meanwhile"
  exit 0
fi

rootfs="$(mktemp -d "${TMPDIR:-/tmp}/opsflow-jre-rootfs.XXXXXX")"
log="$rootfs.log"
trap 'rm -rf "$rootfs" "$log"' EXIT
echo "Building $IMAGE from Debian bookworm (debootstrap into $rootfs)"
debootstrap --variant=minbase --include=openjdk-17-jre-headless,ca-certificates-java,curl bookworm "$rootfs" "$MIRROR" >"$log" 2>&1 \
  || { tail -30 "$log" >&2; exit 1; }
# Keep the image small: no package caches or docs.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/*
echo "Importing $IMAGE into the Docker engine"
tar -C "$rootfs" -c . | docker import \
  --change 'ENV JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64' \
  --change 'ENV PATH=/usr/lib/jvm/java-17-openjdk-amd64/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'WORKDIR /app' \
  - "$IMAGE" >/dev/null
docker run --rm "$IMAGE" java -version 2>&1 | sed -n 1p
echo "Built $IMAGE"
