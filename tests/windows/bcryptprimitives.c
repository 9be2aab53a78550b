/* bcryptprimitives.dll for Wine 8, which lacks it: Rust's std (1.78+) draws its
 * random bytes from ProcessPrng, exported here on top of RtlGenRandom
 * (advapi32's SystemFunction036), which Wine has. Wine 10 ships the real DLL. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
