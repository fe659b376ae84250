#!/bin/sh
# install-deps.sh - installs the Debian packages listed in
# scripts/debian-packages.txt that are missing; a no-op when all are present.
# Uses sudo when not root. Set PIXSUM_NO_INSTALL=1 to skip entirely.
set -eu
[ "${PIXSUM_NO_INSTALL:-0}" = 1 ] && exit 0
here=$(dirname "$0")
list=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/debian-packages.txt")
missing=""
for pkg in $list; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $pkg"
    fi
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing:$missing"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing
