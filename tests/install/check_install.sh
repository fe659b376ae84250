#!/bin/sh
# check_install.sh BUILD_DIR WORK_DIR - installs the build into a scratch
# prefix, then builds and runs a consumer through find_package(pixsum) (shared
# and static) and through pkg-config, as a user of the installed library would.
set -eu
build=$1
work=$2
src=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
test -f "$prefix/include/pixsum.h"
ls "$prefix"/lib*/libpixsum.so.0 >/dev/null
ls "$prefix"/lib*/libpixsum.a >/dev/null
# The consumer uses the library's compiler: a static libpixsum built with OpenMP
# needs that compiler's OpenMP runtime (libgomp for gcc, libomp for clang).
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
cc=${cc:-cc}
cmake -S "$src/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" >"$work/configure.log"
cmake --build "$work/consumer" >"$work/build.log"
"$work/consumer/consumer_shared"
"$work/consumer/consumer_static"
pc_dir=$(dirname "$(ls "$prefix"/lib*/pkgconfig/pixsum.pc)")
flags=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs pixsum)
libdir=$(dirname "$pc_dir")
# shellcheck disable=SC2086
"$cc" -o "$work/consumer_pc" "$src/consumer/consumer.c" $flags
LD_LIBRARY_PATH="$libdir" "$work/consumer_pc"
echo "install check passed"
