#!/usr/bin/env bash
# gpu-deps-dask.sh - rebuilds .gpu-deps/pydask: a pure-Python Dask that
# imports under NumPy 2 and Python 3.12 (the GPU machine has neither Dask nor
# a package index), with the pure-Python packages dask.array and its threaded
# scheduler import. scripts/gpu-pip-check.sh and gpu-check.sh's python step
# put the folder on PYTHONPATH where `import dask` fails, so that
# python/tests/test_dask.py (CuPy chunks included) runs there. The folder is
# git-ignored and travels with the working tree.
#
# Sources: release tags of git clones (bare or not) of dask/dask,
# pytoolz/toolz, cloudpipe/cloudpickle and dask/partd, found under SRC as
# OWNER+NAME/repo, NAME.git or NAME/.git; and Debian 12's packages (fetched
# with `apt-get download`, unpacked with `dpkg -x`, compiled modules left
# out) for locket, fsspec, packaging, PyYAML, and importlib-metadata with zipp
# (which dask imports below Python 3.12 only).
# Versioneer's _version.py is written as the release's sdist has it, so
# `dask.__version__` is the tag.
#
# usage: scripts/gpu-deps-dask.sh [SRC]   (SRC default /work/.mirror;
#        DASK_TAG, TOOLZ_TAG, CLOUDPICKLE_TAG, PARTD_TAG pick the releases)
set -eu -o pipefail
cd "$(dirname "$0")/.."
SRC=${1:-/work/.mirror}
DASK_TAG=${DASK_TAG:-2024.12.1}
TOOLZ_TAG=${TOOLZ_TAG:-1.0.0}
CLOUDPICKLE_TAG=${CLOUDPICKLE_TAG:-v3.1.1}
PARTD_TAG=${PARTD_TAG:-1.4.2}
DEBS="python3-locket python3-fsspec python3-packaging python3-yaml python3-importlib-metadata
      python3-zipp"
OUT=.gpu-deps/pydask
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

git_dir() { # owner name -> the git directory of a clone under SRC
    for d in "$SRC/$1+$2/repo" "$SRC/$2.git" "$SRC/$2/.git"; do
        [ -d "$d" ] && { echo "$d"; return; }
    done
    echo "gpu-deps-dask: no clone of $1/$2 under $SRC" >&2
    exit 1
}

# versioneer's static _version.py, as `setup.py sdist` writes it
static_version() { # file version git-dir tag
    local rev date
    rev=$(git --git-dir="$3" rev-list -n 1 "$4")
    date=$(git --git-dir="$3" log -1 --format=%cI "$4")
    cat >"$1" <<PY
# Written by scripts/gpu-deps-dask.sh as versioneer writes it into a release
# archive: the version of tag $4.

import json

version_json = '''
{
 "date": "$date",
 "dirty": false,
 "error": null,
 "full-revisionid": "$rev",
 "version": "$2"
}
'''  # END VERSION_JSON


def get_versions():
    return json.loads(version_json)
PY
}

from_git() { # owner name tag version paths...
    local g repo="$1/$2" tag=$3 version=$4
    g=$(git_dir "$1" "$2")
    shift 4
    git --git-dir="$g" archive "$tag" "$@" | tar -x -C "$TMP/pydask"
    for p in "$@"; do
        # versioneer's keywords, filled in only by an export-subst archive
        # shellcheck disable=SC2016
        if [ -f "$TMP/pydask/$p/_version.py" ] &&
            grep -q '\$Format:%d\$' "$TMP/pydask/$p/_version.py"; then
            static_version "$TMP/pydask/$p/_version.py" "$version" "$g" "$tag"
        fi
    done
    echo "$repo $tag" >>"$TMP/pydask/SOURCES.txt"
}

mkdir -p "$TMP/pydask" "$TMP/debs"
from_git dask dask "$DASK_TAG" "$DASK_TAG" dask
from_git pytoolz toolz "$TOOLZ_TAG" "$TOOLZ_TAG" toolz tlz
from_git cloudpipe cloudpickle "$CLOUDPICKLE_TAG" "${CLOUDPICKLE_TAG#v}" cloudpickle
from_git dask partd "$PARTD_TAG" "$PARTD_TAG" partd
# tests and benchmarks of the packages are not needed
find "$TMP/pydask" -depth -type d \( -name tests -o -name benchmarks \) -exec rm -rf {} +

# apt's download user must reach the folder; $DEBS is a list of names
# shellcheck disable=SC2086
(cd "$TMP/debs" && chmod 755 "$TMP" && chmod 777 . && apt-get download $DEBS >/dev/null)
for f in "$TMP"/debs/*.deb; do
    dpkg -x "$f" "$TMP/root"
    echo "debian $(basename "$f")" >>"$TMP/pydask/SOURCES.txt"
done
site="$TMP/root/usr/lib/python3/dist-packages"
for p in locket fsspec packaging yaml importlib_metadata zipp.py; do
    cp -r "$site/$p" "$TMP/pydask/"
done
find "$TMP/pydask" \( -name '*.so' -o -name '__pycache__' \) -prune -exec rm -rf {} +

rm -rf "$OUT"
mkdir -p .gpu-deps
mv "$TMP/pydask" "$OUT"
echo "gpu-deps-dask: $OUT ($(du -sh "$OUT" | cut -f1)):"
sed 's/^/  /' "$OUT/SOURCES.txt"
