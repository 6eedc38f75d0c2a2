"""Carry a Triton wheel other than the device image's (3.6) to the GPU machine, one piece per call.

The GPU machine reaches nothing outside and one call carries at most 64 MiB, the working tree
included (~15 MB); a Triton wheel is ~200 MB. ``pack`` (here) keeps what a Gluon kernel needs on
sm_90 -- not the AMD backend, the Blackwell ptxas, CUPTI, Proton or instrumentation -- and cuts it
into folders 0, 1, ... under .triton_parts/<version>/ of at most 45 MB each: the xz'd libtriton.so
in pieces, then the rest of the package.
``unpack`` (on the device) puts them together into .triton_parts/<version>/site, which a run puts
ahead on PYTHONPATH, with TRITON_BACKENDS_IN_TREE=1 (the image's Triton 3.6 registers the AMD
backend as an entry point; this copy has none).

The repository folder is copied afresh for each call (a folder carried in one call is gone in the
next), so each call keeps its piece in /tmp, which lasts as long as the warm machine does; the
calls must follow each other within its idle release (results/2026-12-02/session20/call1.sh and
call2.sh):

    python scripts/device/triton_parts.py pack 3.9.0        # here: pip download + xz (~5 min)
    run(carry=[".triton_parts/3.9.0/0"], command="mkdir -p /tmp/tp && cp -r .triton_parts/3.9.0/* /tmp/tp/")
    run(carry=[".triton_parts/3.9.0/1"], command="cp -r .triton_parts/3.9.0/* /tmp/tp/")
    run(carry=[".triton_parts/3.9.0/2"], command="cp -r /tmp/tp/* .triton_parts/3.9.0/ && "
                                                 "python3 scripts/device/triton_parts.py unpack 3.9.0 && ...")
"""

from __future__ import annotations

import argparse
import glob
import io
import lzma
import os
import pathlib
import subprocess
import sys
import tarfile
import tempfile
import zipfile

PART_BYTES = 45_000_000  # with the working tree, under the 64 MiB a call carries
LIBTRITON = "triton/_C/libtriton.so"
LEFT_OUT = ("triton/_C/libproton.so", "triton/backends/nvidia/bin/ptxas-blackwell", "triton/backends/amd/",
            "triton/backends/nvidia/lib/cupti", "triton/instrumentation/")


def _root(version: str) -> str:
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True)
    return os.path.join(top.stdout.strip(), ".triton_parts", version)


def pack(version: str) -> None:
    root = _root(version)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "--python-version", "3.12", "--implementation", "cp", "--platform", "manylinux_2_28_x86_64",
                        "-d", tmp, f"triton=={version}"], check=True)
        (wheel,) = glob.glob(os.path.join(tmp, "triton-*.whl"))
        rest = io.BytesIO()
        with zipfile.ZipFile(wheel) as z, tarfile.open(fileobj=rest, mode="w:xz") as tar:
            lib = lzma.compress(z.read(LIBTRITON), preset=6)
            for info in z.infolist():
                if info.is_dir() or info.filename == LIBTRITON or info.filename.startswith(LEFT_OUT):
                    continue
                member = tarfile.TarInfo(info.filename)
                data = z.read(info)
                member.size = len(data)
                member.mode = 0o755 if "/bin/" in info.filename else 0o644
                tar.addfile(member, io.BytesIO(data))
    pieces = [(f"libtriton.xz.{i}", lib[at:at + PART_BYTES]) for i, at in enumerate(range(0, len(lib), PART_BYTES))]
    pieces.append(("package.tar.xz", rest.getvalue()))
    for folder, (name, data) in enumerate(pieces):
        os.makedirs(os.path.join(root, str(folder)), exist_ok=True)
        with open(os.path.join(root, str(folder), name), "wb") as f:
            f.write(data)
        print(f"{root}/{folder}/{name}: {len(data) >> 20} MiB")


def unpack(version: str) -> None:
    root = _root(version)
    site = os.path.join(root, "site")
    lib_path = os.path.join(site, LIBTRITON)
    if os.path.exists(lib_path):
        print(f"{site}: already there")
        return
    found = {os.path.basename(p): p for p in glob.glob(os.path.join(root, "[0-9]*", "*"))}
    pieces = sorted((n for n in found if n.startswith("libtriton.xz.")), key=lambda n: int(n.rsplit(".", 1)[1]))
    expected = [f"libtriton.xz.{i}" for i in range(len(pieces))] + ["package.tar.xz"]
    if pieces + ["package.tar.xz"] != expected or "package.tar.xz" not in found:
        raise SystemExit(f"{root}: found {sorted(found)}; carry folders 0, 1, ... one per call on the same machine")
    parts = [found[n] for n in pieces]
    with tarfile.open(found["package.tar.xz"]) as tar:
        tar.extractall(site, filter="tar")
    lib = lzma.decompress(b"".join(pathlib.Path(p).read_bytes() for p in parts))
    with open(lib_path, "wb") as f:
        f.write(lib)
    print(f"{site}: Triton {version} unpacked")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("action", choices=("pack", "unpack"))
    p.add_argument("version")
    a = p.parse_args()
    (pack if a.action == "pack" else unpack)(a.version)
