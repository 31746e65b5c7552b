#!/bin/sh
# make test-fresh: the README's two set-up commands on a fresh Debian machine.
#
# Builds a minimal Debian root with debootstrap (from the same archive and
# release as this machine's apt sources), copies the tracked files of this
# checkout and ../shared into it, and runs `make run` (without a terminal, so
# it tells the story as text) and then `make test` inside it, as root. The root
# has nothing but Debian's minbase and make: every other package must be
# installed by the Makefile itself (make deps). Not part of `make test`: it
# downloads a few hundred MB of packages and takes several minutes.
#
# The bare root is cached as build/fresh/base.tar; each run unpacks it anew.
# Log: build/fresh/log.  Needs root (or sudo) for debootstrap and chroot.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
shared=${AHASCOPE_SHARED:-$top/../shared}
work=$top/build/fresh
root=$work/root
log=$work/log

if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "test-fresh: needs root (debootstrap, chroot) and there is no sudo" >&2; exit 1; }
    exec sudo -E sh "$0" "$@"
fi
[ -d "$shared" ] || { echo "test-fresh: $shared: no shared data (set AHASCOPE_SHARED)" >&2; exit 1; }

# The archive and release this machine's apt already uses ($AHASCOPE_MIRROR
# and $AHASCOPE_SUITE override them).
suite=${AHASCOPE_SUITE:-$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")}
mirror=${AHASCOPE_MIRROR:-$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    sed -nE 's/^URIs:[[:space:]]*([^[:space:]]+).*/\1/p; s/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+).*/\2/p' |
    grep -v security | head -n 1)}
[ -n "$mirror" ] || { echo "test-fresh: no Debian archive found in /etc/apt (set AHASCOPE_MIRROR)" >&2; exit 1; }

cleanup() {
    for m in dev/pts dev proc sys; do umount -l "$root/$m" 2>/dev/null || true; done
}
trap cleanup EXIT INT TERM
cleanup
rm -rf "$root"
mkdir -p "$work"
start=$(date +%s)

if [ ! -s "$work/base.tar" ]; then
    command -v debootstrap >/dev/null 2>&1 || {
        echo "test-fresh: installing debootstrap"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
    }
    echo "test-fresh: debootstrap $suite (minbase + make) from $mirror"
    debootstrap --variant=minbase --include=make "$suite" "$root.new" "$mirror" >"$work/debootstrap.log" 2>&1 ||
        { echo "test-fresh: debootstrap failed (see $work/debootstrap.log)" >&2; exit 1; }
    tar -C "$root.new" -cf "$work/base.tar" .
    rm -rf "$root.new"
fi
mkdir -p "$root"
tar -C "$root" -xf "$work/base.tar"

# the checkout as a clone would have it (tracked files), and shared/ beside it
mkdir -p "$root/work/ahascope"
(cd "$top" && git ls-files -z | tar --null -T - -cf -) | tar -C "$root/work/ahascope" -xf -
cp -a "$shared" "$root/work/shared"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# The machine's own network settings, not packages: the certificate
# authorities this host trusts locally (a TLS-inspecting egress, for one),
# which the ca-certificates package that make deps installs then takes in.
if [ -d /usr/local/share/ca-certificates ]; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp -a /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
fi
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"

echo "test-fresh: make run, then make test, in $root (log: $log)"
set +e
chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    LANG=C.UTF-8 TERM=dumb sh -c 'cd /work/ahascope && make run </dev/null && make test' >"$log" 2>&1
rc=$?
set -e
end=$(date +%s)
tail -n 5 "$log"
echo "test-fresh: exit $rc after $((end - start)) s"
exit $rc
