/*
 * commands.h - the subcommands of the `pixsum` tool. Each lives in its own
 * file tools/cmd_<name>.c and has the signature below: argv[0] is the
 * subcommand's name; it returns the process exit status (0 success, 1 runtime
 * error, 2 usage error) after printing any error to stderr as
 * "pixsum <name>: <message>".
 */
#ifndef PIXSUM_TOOLS_COMMANDS_H
#define PIXSUM_TOOLS_COMMANDS_H

typedef int (*pixsum_command_fn)(int argc, char **argv);

/* Declared weak so a command whose file is not built is reported as missing
 * instead of breaking the link. */
#define PIXSUM_COMMANDS(X)                                                             \
    X(integral, "integral image (SAT) of an image file (.npy .pgm .ppm .pfm .png .jpg .tif)") \
    X(box, "box sum / mean / variance filter over a window")                           \
    X(threshold, "local threshold (mean, Niblack, Sauvola): a map or a mask")           \
    X(normalize, "local normalisation (x - mean) / (std + eps) over a window")          \
    X(hist, "histogram of an image (CSV or JSON)")                                     \
    X(equalize, "histogram equalisation of an 8- or 16-bit image")                     \
    X(methods, "list the registered methods and what they support")                    \
    X(info, "what a file is, and what this build and machine support")                 \
    X(bench, "time operations x methods x types x sizes x threads")                    \
    X(demo, "the demonstration run by `make run` on a built-in sample image")             \
    X(convert, "copy an image into another file format, strip by strip")

#define PIXSUM_DECLARE_COMMAND(name, help) \
    int cmd_##name(int argc, char **argv) __attribute__((weak));
PIXSUM_COMMANDS(PIXSUM_DECLARE_COMMAND)
#undef PIXSUM_DECLARE_COMMAND

#endif
