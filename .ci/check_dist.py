"""Check the built sdist and wheel against the source tree: every file of src/hopgraph (code,
prompts, the page and its vendored scripts) must be in both, so a package-data pattern that
misses a new file fails here rather than in a user's install.

Usage: python .ci/check_dist.py DIST_DIR SRC_PACKAGE_DIR (e.g. /tmp/x/dist src/hopgraph)
"""

from __future__ import annotations

import sys
import tarfile
import zipfile
from pathlib import Path


def source_files(package: Path) -> set[str]:
    """Paths under the package folder, relative to its parent (hopgraph/...), no bytecode."""
    return {path.relative_to(package.parent).as_posix() for path in package.rglob("*")
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"}


def one(dist: Path, pattern: str) -> Path:
    """The single file in `dist` matching `pattern`."""
    found = sorted(dist.glob(pattern))
    if len(found) != 1:
        sys.exit(f"check_dist: expected one {pattern} in {dist}, found {[p.name for p in found]}")
    return found[0]


def main(dist: Path, package: Path) -> int:
    """Compare both archives with the source tree; print what is missing, return 1 if any."""
    expected = source_files(package)
    if not expected:
        sys.exit(f"check_dist: no files under {package}")
    wheel = one(dist, "*.whl")
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = set(archive.namelist())
    sdist = one(dist, "*.tar.gz")
    with tarfile.open(sdist) as archive:
        # hopgraph-0.1.0/src/hopgraph/... -> hopgraph/...
        in_sdist = {name.split("/", 2)[2] for name in archive.getnames() if name.count("/") >= 2
                    and name.split("/", 2)[1] == "src"}
    failed = 0
    for archive_path, names in ((wheel, in_wheel), (sdist, in_sdist)):
        missing = sorted(expected - names)
        if missing:
            failed = 1
            print(f"check_dist: {archive_path.name} lacks {len(missing)} of the "
                  f"{len(expected)} files of {package}:", *missing, sep="\n  ", file=sys.stderr)
        else:
            print(f"check_dist: {archive_path.name} holds all {len(expected)} files of {package}")
    return failed


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
