#!/usr/bin/python3
"""Checks that the Dockerfile's runtime stage installs what kilnd and kiln load.

Every shared library the built kilnd and kiln resolve (ldd) must belong to a Debian package the
runtime stage's `apt-get install` names, or to one of their dependencies (apt-cache depends
--recurse): a library added to the build without its package in the image fails here rather
than at the image's first start. Also checks the version pins match what Debian 12 offers.

usage: check_runtime_packages.py DOCKERFILE BINARY...
"""
import re
import subprocess
import sys
from pathlib import Path


def runtime_packages(dockerfile):
    text = Path(dockerfile).read_text().replace("\\\n", " ")
    runtime = text[text.index("AS runtime"):]
    install = re.search(r"apt-get install -y --no-install-recommends (.*?)&&", runtime).group(1)
    return dict(word.split("=", 1) for word in install.split())


def closure(packages):
    out = subprocess.run(
        ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
         "--no-breaks", "--no-replaces", "--no-enhances", "--no-pre-depends", *packages],
        capture_output=True, text=True, check=True).stdout
    names = set(packages)
    for line in out.splitlines():
        line = line.strip().lstrip("|")
        if line.startswith("Depends:"):
            line = line.split(":", 1)[1].strip()
        names.add(line.strip("<>").split(":")[0].strip())
    return names


def owner(path):
    real = str(Path(path).resolve())
    for candidate in (real, "/usr" + real if not real.startswith("/usr") else real[4:]):
        found = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if found.returncode == 0:
            return found.stdout.split(":")[0]
    return None


def main():
    dockerfile, binaries = sys.argv[1], sys.argv[2:]
    pins = runtime_packages(dockerfile)
    problems = []
    for package, pin in pins.items():
        candidate = subprocess.run(["apt-cache", "policy", package], capture_output=True,
                                   text=True).stdout
        version = re.search(r"Candidate: (\S+)", candidate)
        pattern = re.escape(pin).replace(r"\*", ".*")
        if not version or not re.fullmatch(pattern, version.group(1)):
            problems.append(f"{package}={pin}: Debian 12 offers {version.group(1) if version else 'nothing'}")
    available = closure(list(pins))
    for binary in binaries:
        ldd = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
        for library in re.findall(r"=> (/\S+)", ldd):
            package = owner(library)
            if package is None or package not in available:
                problems.append(f"{binary}: {library} (package {package}) is not installed by the "
                                "runtime stage")
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{len(pins)} runtime packages, {len(binaries)} binaries checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
