"""A remote file read by HTTP range requests, for the registry generators that
read one member of a large wheel (its METADATA, a header) without downloading
the whole archive: `zipfile.ZipFile(io.BufferedReader(RangeFile(url)))`."""

import io
import urllib.request


class RangeFile(io.RawIOBase):
    """`url`'s bytes, fetched a range at a time; `size` from a HEAD request
    unless the index already announced it."""

    def __init__(self, url, size=None, timeout=120):
        self.url, self.pos, self.timeout = url, 0, timeout
        if size is None:
            head = urllib.request.Request(url, method="HEAD")
            size = int(urllib.request.urlopen(head, timeout=timeout).headers["Content-Length"])
        self.size = size

    def seekable(self):
        return True

    def readable(self):
        return True

    def seek(self, off, whence=0):
        self.pos = off if whence == 0 else (self.pos + off if whence == 1 else self.size + off)
        return self.pos

    def tell(self):
        return self.pos

    def readinto(self, buf):
        n = min(len(buf), self.size - self.pos)
        if n <= 0:
            return 0
        rng = "bytes=%d-%d" % (self.pos, self.pos + n - 1)
        req = urllib.request.Request(self.url, headers={"Range": rng})
        data = urllib.request.urlopen(req, timeout=self.timeout).read()
        buf[: len(data)] = data
        self.pos += len(data)
        return len(data)
