"""The life of Graphiti's embedded FalkorDB (``falkordblite``): one database per conversation,
its redis-server stopped at the conversation's end, and the servers of a killed run swept up.

Each conversation gets a fresh directory under the run's root. Its owner (this process, by pid
and start time) is written there before the server starts, then again with the server's own
directory, because falkordblite's redis-server is daemonised: it outlives a ``kill -9`` of the
run, and the next run finds it by its working directory (the conversation's) and stops it.

Processes are read with ``psutil`` (falkordblite's own dependency, declared in the ``graphiti``
extra): a process's start time (a pid alone can be reused) and another process's working
directory have no portable standard-library reading.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

WORKDIR_PREFIX = "amg-graphiti-"
OWNER_FILE = "owner.json"


def new_workdir(root: Path) -> Path:
    """A fresh directory under ``root`` for one conversation's database, owned by this process."""
    root.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix=WORKDIR_PREFIX, dir=root))
    record_owner(workdir)
    return workdir


def record_owner(workdir: Path, db: Any = None) -> None:
    """Who owns this conversation's directory (written before its embedded server starts, then
    with the server's own directory), so a later run can stop the server if this process is
    killed: the redis-server is daemonised and outlives a ``kill -9`` of the run."""
    import psutil

    me = psutil.Process()
    info = {"owner_pid": me.pid, "owner_started": me.create_time()}
    if db is not None:
        info["redis_dir"] = getattr(db.client, "redis_dir", None)
    tmp = workdir / (OWNER_FILE + ".tmp")
    tmp.write_text(json.dumps(info))
    tmp.replace(workdir / OWNER_FILE)


async def stop_server(db: Any) -> None:
    """Close the embedded database and stop its redis-server now: falkordblite's async close leaves
    the server running until the process exits, so a long run would accumulate servers. The
    database is discarded with its temp directory, so the server is killed, not asked to save
    (SIGTERM saves first, ~1.5 s; a SHUTDOWN command waits out the client's reconnect retries),
    and its own directory (socket, pid file; falkordblite removes it only on its sync path) goes
    too."""
    pid = getattr(db.client, "pid", None)
    redis_dir = getattr(db.client, "redis_dir", None)  # its socket, pid file and config
    try:
        await db.close()
    except Exception:
        pass
    if pid:
        import psutil

        try:
            server = psutil.Process(pid)
            server.kill()
            deadline = time.monotonic() + 10
            # The server is daemonised (init reaps it): gone once it is a zombie.
            while server.status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
                await asyncio.sleep(0.005)
        except psutil.NoSuchProcess:
            pass
    if redis_dir:
        shutil.rmtree(redis_dir, ignore_errors=True)


def sweep_orphans(tmp: Path | None = None) -> int:
    """Stop the embedded servers, and remove the directories, of conversations whose process died
    without closing them (a killed run): a server is known by its working directory (the
    conversation's). Returns how many directories it cleaned."""
    import psutil

    dead = []
    for d in Path(tmp or tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}*"):
        try:
            owner = json.loads((d / OWNER_FILE).read_text())
            alive = psutil.Process(owner["owner_pid"]).create_time() == owner["owner_started"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not ours, or not set up yet
        except psutil.NoSuchProcess:
            alive = False
        if not alive:
            dead.append((os.path.realpath(d), owner.get("redis_dir")))
    if not dead:
        return 0
    where = {w: {r} if r else set() for w, r in dead}
    for proc in psutil.process_iter(["name", "cwd", "cmdline"]):
        try:
            cwd = proc.info.get("cwd")
            if proc.info.get("name") == "redis-server" and cwd and os.path.realpath(cwd) in where:
                for part in proc.info.get("cmdline") or []:
                    if part.startswith("unixsocket:"):
                        where[os.path.realpath(cwd)].add(
                            os.path.dirname(part[len("unixsocket:") :])
                        )
                proc.kill()
        except psutil.Error:
            continue
    for w, redis_dirs in where.items():
        for r in redis_dirs:
            shutil.rmtree(r, ignore_errors=True)
        shutil.rmtree(w, ignore_errors=True)
    return len(where)
