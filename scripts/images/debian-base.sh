#!/usr/bin/env bash
# Builds a minimal Debian image from Debian's packages (debootstrap, then `docker import`), the root of every
# stand-in image that scripts/images.ts builds on a machine that reaches no image registry.
# It trusts the authorities this machine trusts (its egress proxy's among them), so that a build inside it
# reaches the registries the way the host does. The image gets its name only once it ran a command.
# Usage: debian-base.sh SUITE IMAGE [EXTRA_PACKAGES]
set -euo pipefail

SUITE="${1:?usage: debian-base.sh SUITE IMAGE [PACKAGES]}"
IMAGE="${2:?usage: debian-base.sh SUITE IMAGE [PACKAGES]}"
PACKAGES="${3:-}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

[ "$(id -u)" = 0 ] || { echo "building $IMAGE from Debian packages needs root (debootstrap)" >&2; exit 3; }
command -v debootstrap >/dev/null || { echo "debootstrap is missing: apt-get install debootstrap" >&2; exit 3; }

rootfs="$(mktemp -d /tmp/opsflow-base-rootfs.XXXXXX)"
log="$rootfs.log"
candidate="opsflow/base-candidate:$$"
trap 'rm -rf "$rootfs" "$log"; docker rmi "$candidate" >/dev/null 2>&1 || true' EXIT
echo "debootstrap $SUITE into $rootfs"
debootstrap --variant=minbase --include="ca-certificates${PACKAGES:+,$PACKAGES}" "$SUITE" "$rootfs" "$MIRROR" >"$log" 2>&1 \
  || { tail -5 "$log" >&2; exit 1; }

# Apt inside the image reads the same mirror, with the suite's updates and security fixes.
cat >"$rootfs/etc/apt/sources.list" <<SOURCES
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb http://deb.debian.org/debian-security $SUITE-security main
SOURCES
# The authorities this machine added to its own store.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/"
  chroot "$rootfs" update-ca-certificates >/dev/null
fi
# As the official slim images: no package caches or docs, and apt keeps none.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/*
echo "importing $IMAGE"
tar -C "$rootfs" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["bash"]' \
  ${OPSFLOW_IMAGE_LABEL:+--change "LABEL $OPSFLOW_IMAGE_LABEL"} \
  - "$candidate" >/dev/null
docker run --rm "$candidate" cat /etc/debian_version
docker tag "$candidate" "$IMAGE"
echo "built $IMAGE"
