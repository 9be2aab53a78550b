/* Loads a CUDA runtime DLL the way a CUDA program does (LoadLibrary by name:
 * the program's directory, the system directories, then PATH) and prints
 * what it found, one `key=value` per line:
 *
 *   loaded=C:\...\bin\cudart64_12.dll
 *   runtime_rc=0
 *   runtime=12040
 *   device_count_rc=35
 *
 * Exit status: 0 when the DLL loaded and exports cudaRuntimeGetVersion, 2
 * when it did not load, 3 when the export is missing. The first argument is
 * the DLL's name (cudart64_12.dll by default). */
#include <windows.h>
#include <stdio.h>

typedef int (*int_out_fn)(int *);

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "cudart64_12.dll";
    HMODULE h = LoadLibraryA(name);
    if (!h) {
        printf("error=cannot load %s (Windows error %lu)\n", name, GetLastError());
        return 2;
    }
    char path[MAX_PATH];
    DWORD n = GetModuleFileNameA(h, path, sizeof path);
    printf("loaded=%.*s\n", (int)n, path);
    int_out_fn version = (int_out_fn)GetProcAddress(h, "cudaRuntimeGetVersion");
    int_out_fn count = (int_out_fn)GetProcAddress(h, "cudaGetDeviceCount");
    if (!version || !count) {
        printf("error=%s exports no cudaRuntimeGetVersion/cudaGetDeviceCount\n", name);
        return 3;
    }
    int v = -1, c = -1;
    printf("runtime_rc=%d\n", version(&v));
    printf("runtime=%d\n", v);
    printf("device_count_rc=%d\n", count(&c));
    return 0;
}
