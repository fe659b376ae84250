# mpi-env.sh - sourced by the MPI scripts (gpu-mpi-check.sh, mpi-scaling.sh):
# makes `mpirun` and an MPI C compiler available. Uses the machine's Open MPI
# when `mpirun` is on PATH; otherwise unpacks the Debian packages carried in
# .gpu-deps/mpi/*.deb (fetched with `apt-get download`, see docs/distributed.md)
# under /tmp/pixsum-ompi and points Open MPI at that prefix (OPAL_PREFIX).
# Sets PIXSUM_MPI_CMAKE to the CMake arguments that find that MPI, and
# PIXSUM_MPIRUN to the launcher (run as root, oversubscription allowed).
# Returns 1, with a line on stderr, when neither exists.
PIXSUM_MPI_CMAKE=""
if ! command -v mpirun >/dev/null 2>&1; then
    if ! ls .gpu-deps/mpi/*.deb >/dev/null 2>&1; then
        echo "mpi-env: no mpirun and no .gpu-deps/mpi/*.deb (Debian: openmpi-bin libopenmpi-dev)" >&2
        return 1
    fi
    ompi=/tmp/pixsum-ompi
    mkdir -p "$ompi/bin"
    for f in .gpu-deps/mpi/*.deb; do dpkg -x "$f" "$ompi"; done
    # Debian installs the commands as NAME.openmpi behind alternatives links
    ln -sf "$ompi/usr/bin/mpirun.openmpi" "$ompi/bin/mpirun"
    ln -sf "$ompi/usr/bin/mpicc.openmpi" "$ompi/bin/mpicc"
    export OPAL_PREFIX="$ompi/usr"
    export PATH="$ompi/bin:$PATH"
    export LD_LIBRARY_PATH="$ompi/usr/lib/x86_64-linux-gnu:$ompi/usr/lib/x86_64-linux-gnu/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    PIXSUM_MPI_CMAKE="-DMPI_C_COMPILER=$ompi/bin/mpicc"
fi
PIXSUM_MPIRUN="mpirun --allow-run-as-root --oversubscribe"
