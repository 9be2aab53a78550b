/* A stand-in CUDA tool for the shim tests: prints each argument it got, one
 * per line between brackets (as the C runtime split Windows' command line),
 * and the CUDA_PATH it sees, then exits with the status named by the
 * environment variable ARGECHO_EXIT (0 by default). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        printf("arg=[%s]\n", argv[i]);
    const char *home = getenv("CUDA_PATH");
    printf("CUDA_PATH=%s\n", home ? home : "");
    const char *code = getenv("ARGECHO_EXIT");
    return code ? atoi(code) : 0;
}
