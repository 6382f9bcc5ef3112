"""One file over HTTP(S) into ``NAME.part`` beside its destination, resuming what an earlier,
interrupted run left there (an HTTP Range request). The caller verifies the bytes and renames
the file, so nothing incomplete ever carries the final name."""

from __future__ import annotations

import http.client
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from ..errors import DownloadError
from ..progress import bytes_bar

CHUNK = 1 << 16
TIMEOUT = 30  # seconds without a byte before the transfer counts as interrupted


def _open(url: str, start: int):
    headers = {"User-Agent": "agentmemgate"}
    if start:
        headers["Range"] = f"bytes={start}-"
    host = urllib.parse.urlsplit(url).netloc or url
    try:
        return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=TIMEOUT)
    except urllib.error.HTTPError as e:
        if e.code == 416 and start:
            return None  # nothing past the bytes already here: the caller checks them
        raise DownloadError(f"Cannot download {url}: HTTP {e.code} {e.reason}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
        reason = getattr(e, "reason", None) or e
        raise DownloadError(
            f"Cannot reach {host} ({reason}): check the network connection, "
            "or pass --url to download from a mirror"
        ) from None


def download(url: str, part: Path, size: int, label: str, progress: bool = True) -> None:
    """Bring ``part`` up to what ``url`` serves (``size`` bytes expected), continuing from its
    current length."""
    have = part.stat().st_size if part.is_file() else 0
    if have > size:  # not a prefix of the expected file: start again
        part.unlink()
        have = 0
    if have == size:
        return
    resp = _open(url, have)
    if resp is None:
        return
    with resp:
        if have and resp.status != 206:  # the server ignored the range: start again
            have = 0
        length = resp.headers.get("Content-Length")
        end = have + int(length) if length and length.isdigit() else size  # what the server sends
        done = have
        try:
            f = open(part, "ab" if have else "wb")
        except OSError as e:
            raise DownloadError(f"Cannot write {part}: {e.strerror or e}") from None
        with f, bytes_bar(label, size, progress) as update:
            update(done, "resumed" if have else "")
            try:
                while chunk := resp.read(CHUNK):
                    f.write(chunk)
                    done += len(chunk)
                    update(done)
            except (OSError, http.client.HTTPException) as e:
                reason = type(e).__name__ if not str(e) else str(e).splitlines()[0]
                raise DownloadError(_interrupted(label, done, size, reason)) from None
    if done < end:
        raise DownloadError(_interrupted(label, done, size, "the server closed the connection"))
    # a whole file of another size is not an interruption: its checksum refuses it


def _interrupted(label: str, done: int, size: int, reason: str) -> str:
    return (
        f"Download of {label} interrupted after {done:,} of {size:,} bytes ({reason}): "
        "run the same command again to resume"
    )
