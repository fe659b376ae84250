#!/bin/sh
# install-deps.sh - installs the missing Debian packages pixsum needs; a no-op
# when all are present. Uses sudo when not root. Set PIXSUM_NO_INSTALL=1 to
# skip entirely.
#
# usage: scripts/install-deps.sh [run|all]
#   run  scripts/debian-packages-run.txt: the library and the CLI (make run)
#   all  that list and scripts/debian-packages.txt: every test, peer and
#        optional part (make test; the default)
set -eu
[ "${PIXSUM_NO_INSTALL:-0}" = 1 ] && exit 0
here=$(dirname "$0")
lists="$here/debian-packages-run.txt"
case "${1:-all}" in
run) ;;
all) lists="$lists $here/debian-packages.txt" ;;
*) echo "install-deps: unknown set '$1' (run or all)" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
list=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' $lists)
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
